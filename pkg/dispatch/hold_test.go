package dispatch

import (
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDispatchingCondition(t *testing.T) {
	const (
		karmadaSuspended   = "Work dispatching is in a suspended state."
		karmadaDispatching = "Work is being dispatched to member clusters."
	)
	hold := func(reason, message string) map[string]string {
		return map[string]string{"work.federator.dev/hold-reason": reason, "work.federator.dev/hold-message": message}
	}
	for _, tc := range []struct {
		name        string
		suspend     *bool
		annotations map[string]string
		wantHeld    bool
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{"unset dispatches", nil, nil, false, metav1.ConditionTrue, "Dispatching", karmadaDispatching},
		{"false dispatches", ptr.To(false), nil, false, metav1.ConditionTrue, "Dispatching", karmadaDispatching},
		{"false dispatches even with a stale hold annotation", ptr.To(false), hold("GateClosed", "gate prod is closed"),
			false, metav1.ConditionTrue, "Dispatching", karmadaDispatching},
		{"true without annotations holds as Karmada", ptr.To(true), nil, true, metav1.ConditionFalse, "SuspendDispatching", karmadaSuspended},
		{"a suspension reports Karmada's message, not the holder's", ptr.To(true),
			hold("SuspendDispatching", "suspended by annotation ... on Deployment shop/web"),
			true, metav1.ConditionFalse, "SuspendDispatching", karmadaSuspended},
		{"another holder reports its own reason and message", ptr.To(true), hold("GateClosed", "gate prod is closed"),
			true, metav1.ConditionFalse, "GateClosed", "gate prod is closed"},
		{"a reason without a message falls back to Karmada's suspension", ptr.To(true), hold("GateClosed", ""),
			true, metav1.ConditionFalse, "SuspendDispatching", karmadaSuspended},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{SuspendDispatching: tc.suspend}}
			w.Annotations = tc.annotations
			cond, held := DispatchingCondition(w)
			if held != tc.wantHeld || cond.Type != "Dispatching" || cond.Status != tc.wantStatus ||
				cond.Reason != tc.wantReason || cond.Message != tc.wantMessage {
				t.Errorf("got held=%v %+v", held, cond)
			}
		})
	}
}
