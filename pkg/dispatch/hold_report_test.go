package dispatch

import (
	"context"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A Work that has just been held is reconciled later, so the writes that
// make a suspension take effect on the other Works go first; everything
// else the dispatcher acts on is reconciled at once.
func TestHeldWorkIsReportedLaterAndEverythingElseAtOnce(t *testing.T) {
	work := func(suspended *bool, deleting bool, image string) *workv1alpha1.Work {
		w := workFixture(t, false, nil)
		w.Spec.SuspendDispatching = suspended
		if deleting {
			w.DeletionTimestamp = ptr.To(metav1.Now())
		}
		w.Spec.Workload.Manifests[0].Raw = []byte(`{"image":"` + image + `"}`)
		return w
	}
	for _, tc := range []struct {
		name     string
		old, new *workv1alpha1.Work
		atOnce   bool
	}{
		{"a Work held", work(ptr.To(false), false, "v1"), work(ptr.To(true), false, "v1"), false},
		{"a Work held whose field was unset", work(nil, false, "v1"), work(ptr.To(true), false, "v1"), false},
		{"a Work held and given a new manifest", work(ptr.To(false), false, "v1"), work(ptr.To(true), false, "v2"), false},
		{"a Work released", work(ptr.To(true), false, "v1"), work(ptr.To(false), false, "v1"), true},
		{"a held Work given a new manifest", work(ptr.To(true), false, "v1"), work(ptr.To(true), false, "v2"), true},
		{"a Work given a new manifest", work(ptr.To(false), false, "v1"), work(ptr.To(false), false, "v2"), true},
		{"a Work held as its deletion starts", work(ptr.To(false), false, "v1"), work(ptr.To(true), true, "v1"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			h := &holdsReportedLater{}
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}, q)
			if got := q.Len() == 1; got != tc.atOnce {
				t.Errorf("queued at once: %v, want %v", got, tc.atOnce)
			}
		})
	}
}
