package dispatch

import (
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDispatchingCondition(t *testing.T) {
	for _, tc := range []struct {
		name        string
		suspend     *bool
		wantHeld    bool
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{"unset dispatches", nil, false, metav1.ConditionTrue, "Dispatching", "Work is being dispatched to member clusters."},
		{"false dispatches", ptr.To(false), false, metav1.ConditionTrue, "Dispatching", "Work is being dispatched to member clusters."},
		{"true holds", ptr.To(true), true, metav1.ConditionFalse, "SuspendDispatching", "Work dispatching is in a suspended state."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{SuspendDispatching: tc.suspend}}
			cond, held := DispatchingCondition(w)
			if held != tc.wantHeld || cond.Type != "Dispatching" || cond.Status != tc.wantStatus ||
				cond.Reason != tc.wantReason || cond.Message != tc.wantMessage {
				t.Errorf("got held=%v %+v", held, cond)
			}
		})
	}
}
