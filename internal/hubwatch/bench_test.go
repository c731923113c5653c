package hubwatch

import (
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"k8s.io/apimachinery/pkg/watch"
)

// BenchmarkWatchEvent is what observing a watch costs each event an
// informer receives: one more channel hop through observedWatch's
// goroutine. Compare observed with direct, measured in the same run.
func BenchmarkWatchEvent(b *testing.B) {
	work := &workv1alpha1.Work{}
	for _, bc := range []struct {
		name string
		wrap func(watch.Interface) watch.Interface
	}{
		{"direct", func(w watch.Interface) watch.Interface { return w }},
		{"observed", func(w watch.Interface) watch.Interface { return newObservedWatch(w, func() {}) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			events := make(chan watch.Event, 1024)
			w := bc.wrap(watch.NewProxyWatcher(events))
			defer w.Stop()
			go func() {
				for range b.N {
					events <- watch.Event{Type: watch.Modified, Object: work}
				}
			}()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				<-w.ResultChan()
			}
		})
	}
}
