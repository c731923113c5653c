package metrics

import (
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCountWorks(t *testing.T) {
	work := func(ns, reason string) workv1alpha1.Work {
		w := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}}
		if reason != "" {
			w.Status.Conditions = []metav1.Condition{{Type: "Dispatching", Reason: reason}}
		}
		return w
	}
	got := CountWorks([]workv1alpha1.Work{
		work("karmada-es-member1", "Dispatching"),
		work("karmada-es-member1", "Dispatching"),
		work("karmada-es-member2", "SuspendDispatching"),
		work("karmada-es-member2", ""),
		work("default", "Dispatching"), // not an execution namespace
	})
	want := map[WorkKey]int{
		{"member1", "Dispatching"}:        2,
		{"member2", "SuspendDispatching"}: 1,
		{"member2", "Unknown"}:            1,
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%v = %d, want %d", k, got[k], v)
		}
	}
}
