package copystate

import (
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// A copy a Freeze kept from its member is Held, with the freeze's reason
// and message, once the dispatcher says so for the Work's spec; a hold on
// the hub keeps its own reason.
func TestAFrozenCopyIsHeldByTheFreeze(t *testing.T) {
	work := func(suspended bool, conds ...metav1.Condition) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 3},
			Spec:   workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(suspended)},
			Status: workv1alpha1.WorkStatus{Conditions: conds}}
	}
	frozen := func(gen int64) metav1.Condition {
		return metav1.Condition{Type: workkeys.ConditionDispatching, Status: metav1.ConditionFalse, Reason: "Frozen",
			Message: "Freeze freeze-a holds every write to member2: incident 42", ObservedGeneration: gen}
	}
	applied := metav1.Condition{Type: workkeys.ConditionApplied, Status: metav1.ConditionTrue, Reason: "AppliedSuccessful", ObservedGeneration: 2}
	for _, tc := range []struct {
		name                   string
		work                   *workv1alpha1.Work
		state, reason, message string
	}{
		{"frozen at this spec", work(false, frozen(3), applied), Held, "Frozen", "Freeze freeze-a holds every write to member2: incident 42"},
		{"frozen at the spec before: not yet judged", work(false, frozen(2), applied), Pending, "", "waiting for member2 to apply the Work"},
		{"suspended on the hub too: the suspension's reason", work(true, metav1.Condition{Type: workkeys.ConditionDispatching,
			Status: metav1.ConditionFalse, Reason: "SuspendDispatching", ObservedGeneration: 3}), Held, "SuspendDispatching", workkeys.MessageSuspendDispatching},
	} {
		got := Of("member2", tc.work, true, false, 3)
		if got.State != tc.state || got.Reason != tc.reason || got.Message != tc.message {
			t.Errorf("%s: %s/%s %q, want %s/%s %q", tc.name, got.State, got.Reason, got.Message, tc.state, tc.reason, tc.message)
		}
	}
}
