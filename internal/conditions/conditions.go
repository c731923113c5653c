// Package conditions owns how every federator controller records status:
// Set decides, in one place, what counts as a transition of a condition, and
// PatchStatus is the one status write at the end of a reconcile. Controllers
// send an event only for a transition Set reported, and only after
// PatchStatus stored it. SetProgress writes the kstatus conditions (Ready,
// Reconciling, Stalled) GitOps tools read, from one Progress.
package conditions

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Set records cond in conds, stamped with generation as its
// observedGeneration, and reports whether it is a transition: the condition
// is new or its status, reason or message changed, i.e. something a person
// reads changed. A new observedGeneration alone is recorded but is no
// transition. lastTransitionTime moves only when the status changes (as
// meta.SetStatusCondition does).
func Set(conds *[]metav1.Condition, generation int64, cond metav1.Condition) bool {
	cond.ObservedGeneration = generation
	old := meta.FindStatusCondition(*conds, cond.Type)
	transition := old == nil || old.Status != cond.Status || old.Reason != cond.Reason || old.Message != cond.Message
	meta.SetStatusCondition(conds, cond)
	return transition
}

// PatchStatus writes obj's status when obj differs from before (obj as it
// was read, before the reconcile changed its status), with a JSON merge
// patch. It reports whether it wrote.
//
// With lock, the patch carries before's resourceVersion and is refused with
// a conflict when the object changed since it was read: use it where an
// event depends on the write, or where another controller writes other parts
// of the same status (a merge patch replaces whole lists, such as
// conditions). Without lock a stale read is corrected by the next reconcile.
func PatchStatus(ctx context.Context, c client.Client, before, obj client.Object, lock bool) (bool, error) {
	if equality.Semantic.DeepEqual(before, obj) {
		return false, nil
	}
	patch := client.MergeFrom(before)
	if lock {
		patch = client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	}
	return true, c.Status().Patch(ctx, obj, patch)
}
