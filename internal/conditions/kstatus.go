package conditions

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// The kstatus conditions: what Flux (kstatus, sigs.k8s.io/cli-utils) and
// other GitOps tools read to decide whether an applied object is done.
// kstatus reads Reconciling=True as InProgress, Stalled=True as Failed and,
// when neither is True, Ready: True is Current, False InProgress. So every
// federator kind that has a status says one of three things, in one place.
const (
	// ConditionReady is True when the controller has done all it will do
	// for the object's spec until someone acts: done, or held on purpose.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the controller is still getting
	// the object where its spec wants it, by itself (abnormal-true).
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the controller cannot get further
	// without a person fixing something (abnormal-true).
	ConditionStalled = "Stalled"
)

// Progress is where an object stands, as a GitOps tool reads it.
type Progress int

const (
	// Current: done, or held on purpose (a pause, a closed gate, a
	// freeze); nothing more happens by itself. Ready=True.
	Current Progress = iota
	// InProgress: the controller is still acting and will get further by
	// itself. Reconciling=True, Ready=False.
	InProgress
	// Failed: nothing more happens until a person fixes something.
	// Stalled=True, Ready=False.
	Failed
)

// SetProgress records p as the Ready, Reconciling and Stalled conditions
// of conds, each with reason and message, stamped with generation; it
// reports whether any of them is a transition (as Set does).
func SetProgress(conds *[]metav1.Condition, generation int64, p Progress, reason, message string) bool {
	status := func(want Progress) metav1.ConditionStatus {
		if p == want {
			return metav1.ConditionTrue
		}
		return metav1.ConditionFalse
	}
	changed := Set(conds, generation, metav1.Condition{Type: ConditionReady, Status: status(Current), Reason: reason, Message: message})
	changed = Set(conds, generation, metav1.Condition{Type: ConditionReconciling, Status: status(InProgress), Reason: reason, Message: message}) || changed
	changed = Set(conds, generation, metav1.Condition{Type: ConditionStalled, Status: status(Failed), Reason: reason, Message: message}) || changed
	return changed
}
