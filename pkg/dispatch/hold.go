package dispatch

import (
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Karmada's strings for the Work Dispatching condition and the
// WorkDispatching event (pkg/controllers/execution); users' checks read them.
const (
	ReasonSuspendDispatching  = "SuspendDispatching"
	MessageSuspendDispatching = "Work dispatching is in a suspended state."
	ReasonDispatching         = "Dispatching"
	MessageDispatching        = "Work is being dispatched to member clusters."

	EventReasonWorkDispatching = "WorkDispatching"
	EventReasonSyncFailed      = "SyncFailed"
	EventReasonSyncSucceed     = "SyncSucceed"

	ReasonAppliedSuccessful  = "AppliedSuccessful"
	MessageAppliedSuccessful = "Manifest has been successfully applied"
	ReasonAppliedFailed      = "AppliedFailed"
)

// DispatchingCondition decides whether a Work is held and why, as the
// Dispatching condition a person reads. Held means: do not write to the
// member (deletion is never held).
func DispatchingCondition(work *workv1alpha1.Work) (cond metav1.Condition, held bool) {
	if ptr.Deref(work.Spec.SuspendDispatching, false) {
		return metav1.Condition{
			Type:    workv1alpha1.WorkDispatching,
			Status:  metav1.ConditionFalse,
			Reason:  ReasonSuspendDispatching,
			Message: MessageSuspendDispatching,
		}, true
	}
	return metav1.Condition{
		Type:    workv1alpha1.WorkDispatching,
		Status:  metav1.ConditionTrue,
		Reason:  ReasonDispatching,
		Message: MessageDispatching,
	}, false
}
