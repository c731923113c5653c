package dispatch

import (
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// DispatchingCondition reports, as the Dispatching condition a person reads,
// what the Work says of its hold: the hub decided it (pkg/hold, written by
// the binding controller), the dispatcher only honours it. Held means: do
// not write to the member (deletion is never held).
//
// spec.suspendDispatching decides, so a Work written by any Karmada-style
// controller is held too. The hold-reason annotation names the holder; a
// suspension (or a Work without the annotation) reports Karmada's
// SuspendDispatching reason and message exactly, any other holder its own
// reason with the hold-message annotation.
func DispatchingCondition(work *workv1alpha1.Work) (cond metav1.Condition, held bool) {
	if !ptr.Deref(work.Spec.SuspendDispatching, false) {
		return metav1.Condition{Type: workkeys.ConditionDispatching, Status: metav1.ConditionTrue,
			Reason: workkeys.ReasonDispatching, Message: workkeys.MessageDispatching}, false
	}
	reason := work.Annotations[workkeys.HoldReasonAnnotation]
	message := work.Annotations[workkeys.HoldMessageAnnotation]
	if reason == "" || reason == workkeys.ReasonSuspendDispatching || message == "" {
		reason, message = workkeys.ReasonSuspendDispatching, workkeys.MessageSuspendDispatching
	}
	return metav1.Condition{Type: workkeys.ConditionDispatching, Status: metav1.ConditionFalse,
		Reason: reason, Message: message}, true
}
