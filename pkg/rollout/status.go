package rollout

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/revision"
)

// The Rollout's status: the step's conditions, and their one write.

// setOutcome records the step's conditions.
func (r *Reconciler) setOutcome(ro revision.Rollout, out Output, paused string) {
	switch {
	case out.Aborted:
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonAborted, out.Waiting, &out)
	case out.Failed != "":
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonStageFailed, out.Waiting, &out)
	case out.Completed:
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonRolloutCompleted,
			fmt.Sprintf("revision %d reached every stage", out.Status.Revision), &out)
	default:
		r.setConditions(ro, metav1.ConditionTrue, out.WaitingReason, out.Waiting, &out)
	}
	pausedCond := metav1.Condition{Type: rolloutsv1alpha1.ConditionPaused, Status: metav1.ConditionFalse,
		Reason: rolloutsv1alpha1.ReasonNotPaused, Message: "nothing pauses the rollout"}
	switch {
	case paused != "":
		why := ""
		if paused != "true" {
			why = fmt.Sprintf(" (%q)", paused)
		}
		pausedCond = metav1.Condition{Type: rolloutsv1alpha1.ConditionPaused, Status: metav1.ConditionTrue,
			Reason: rolloutsv1alpha1.ReasonSuspended, Message: fmt.Sprintf("paused by annotation %s%s: nothing new is released and the soak clock stops; `federator rollout resume %s` continues",
				policykeys.SuspendedAnnotation, why, ro.Obj.GetName())}
	case out.WaitingReason == rolloutsv1alpha1.ReasonWaitingForPromotion, out.WaitingReason == rolloutsv1alpha1.ReasonAnalysisInconclusive:
		pausedCond = metav1.Condition{Type: rolloutsv1alpha1.ConditionPaused, Status: metav1.ConditionTrue,
			Reason: out.WaitingReason, Message: out.Waiting}
	}
	conditions.Set(&ro.Status.Conditions, ro.Obj.GetGeneration(), pausedCond)
	if paused != "" && !out.Aborted && out.Failed == "" && !out.Completed {
		// Paused on purpose, whatever the step waits for (a soak keeps
		// its reason in Progressing, its clock stopped).
		conditions.SetProgress(&ro.Status.Conditions, ro.Obj.GetGeneration(), conditions.Current,
			rolloutsv1alpha1.ReasonSuspended, "held on purpose: "+pausedCond.Message)
	}
}

// setConditions sets Progressing (status and reason as given), and
// Completed and Failed from out (both False when out is nil).
func (r *Reconciler) setConditions(ro revision.Rollout, progressing metav1.ConditionStatus, reason, msg string, out *Output) {
	gen := ro.Obj.GetGeneration()
	ro.Status.ObservedGeneration = gen
	conditions.Set(&ro.Status.Conditions, gen, metav1.Condition{Type: rolloutsv1alpha1.ConditionProgressing,
		Status: progressing, Reason: reason, Message: msg})
	completed := metav1.Condition{Type: rolloutsv1alpha1.ConditionCompleted, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
	failed := metav1.Condition{Type: rolloutsv1alpha1.ConditionFailed, Status: metav1.ConditionFalse,
		Reason: rolloutsv1alpha1.ReasonNoFailure, Message: "no stage failed more than maxFailures"}
	if out != nil && out.Completed {
		completed.Status = metav1.ConditionTrue
	}
	if out != nil && out.Failed != "" {
		failed = metav1.Condition{Type: rolloutsv1alpha1.ConditionFailed, Status: metav1.ConditionTrue,
			Reason: rolloutsv1alpha1.ReasonStageFailed, Message: msg}
	}
	if reason == rolloutsv1alpha1.ReasonPolicyNotFound || reason == rolloutsv1alpha1.ReasonInvalidSpec || reason == rolloutsv1alpha1.ReasonAborted {
		failed = metav1.Condition{Type: rolloutsv1alpha1.ConditionFailed, Status: metav1.ConditionTrue, Reason: reason, Message: msg}
	}
	conditions.Set(&ro.Status.Conditions, gen, completed)
	conditions.Set(&ro.Status.Conditions, gen, failed)
	p, why, what := progress(reason, msg, out)
	conditions.SetProgress(&ro.Status.Conditions, gen, p, why, what)
}

// progress is what a GitOps tool reads of the step (kstatus, as Flux
// reads it): Failed when only a person can move the rollout on, Current
// when it completed or is held on purpose (nothing happens until someone
// acts: a pause, a stage waiting for promotion or a gate, or every
// cluster in flight held by something else, such as a freeze), and
// InProgress while it gets further by itself.
func progress(reason, msg string, out *Output) (conditions.Progress, string, string) {
	switch reason {
	case rolloutsv1alpha1.ReasonPolicyNotFound, rolloutsv1alpha1.ReasonInvalidSpec,
		rolloutsv1alpha1.ReasonAborted, rolloutsv1alpha1.ReasonStageFailed:
		return conditions.Failed, reason, msg
	case rolloutsv1alpha1.ReasonRolloutCompleted, rolloutsv1alpha1.ReasonNoRevision:
		return conditions.Current, reason, msg
	case rolloutsv1alpha1.ReasonSuspended, rolloutsv1alpha1.ReasonWaitingForPromotion, rolloutsv1alpha1.ReasonWaitingForGate:
		return conditions.Current, reason, "held on purpose: " + msg
	}
	if out != nil && reason == rolloutsv1alpha1.ReasonStageProgressing {
		var held []string
		for _, c := range out.Status.Clusters {
			switch {
			case c.State == rolloutsv1alpha1.StateProgressing:
				return conditions.InProgress, reason, msg
			case c.State == rolloutsv1alpha1.StateHeld && c.Reason == rolloutsv1alpha1.ReasonHeldElsewhere:
				held = append(held, c.Name+": "+c.Message)
			}
		}
		if len(held) > 0 {
			return conditions.Current, rolloutsv1alpha1.ReasonHeldElsewhere, "held on purpose: " + strings.Join(held, "; ")
		}
	}
	return conditions.InProgress, reason, msg
}

func (r *Reconciler) writeStatus(ctx context.Context, ro revision.Rollout, before client.Object) error {
	_, err := conditions.PatchStatus(ctx, r.Client, before, ro.Obj, true)
	return err
}
