package rollout

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// Step's helpers: rolling failed clusters back, aborting, and marking
// clusters waiting, pending or held.

// rollBack puts each failed cluster of clusters back on its last healthy
// revision; one without such a revision stays failed and says so.
func rollBack(in Input, clusters []string, states map[string]rolloutsv1alpha1.ClusterStatus,
	set func(name, state, reason, msg string), why string) []Event {
	var events []Event
	for _, name := range clusters {
		c := states[name]
		if c.State != rolloutsv1alpha1.StateFailed && !(in.Aborted && c.Revision == in.Revision && c.State != rolloutsv1alpha1.StateRolledBack) {
			continue
		}
		if c.LastHealthyRevision == 0 {
			if c.State == rolloutsv1alpha1.StateFailed && !strings.Contains(c.Message, "no earlier healthy revision") {
				set(name, c.State, c.Reason, c.Message+"; no earlier healthy revision to roll back to")
			}
			continue
		}
		msg := fmt.Sprintf("rolled back to revision %d, the last healthy there: %s", c.LastHealthyRevision, why)
		if c.State == rolloutsv1alpha1.StateFailed && c.Message != "" {
			// Why this cluster failed (not healthy in time, its analysis),
			// which the rollback would otherwise hide.
			msg += "; it had failed: " + c.Message
		}
		c.Revision = c.LastHealthyRevision
		states[name] = c
		set(name, rolloutsv1alpha1.StateRolledBack, rolloutsv1alpha1.ReasonRolledBack, msg)
		events = append(events, Event{Warning: true, Reason: rolloutsv1alpha1.EventReasonRolledBack,
			Message: fmt.Sprintf("revision %d: cluster %s %s", in.Revision, name, msg)})
	}
	return events
}

// abort stops the revision: the clusters that got it go back to their last
// healthy revision, the others keep what they have.
func abort(in Input, out Output, states map[string]rolloutsv1alpha1.ClusterStatus, set func(name, state, reason, msg string)) Output {
	var all []string
	for _, s := range in.Stages {
		all = append(all, s.Clusters...)
	}
	out.Events = append(out.Events, rollBack(in, all, states, set, "the revision was aborted")...)
	for _, name := range all {
		switch states[name].State {
		case rolloutsv1alpha1.StatePending, rolloutsv1alpha1.StateHeld:
			set(name, rolloutsv1alpha1.StateHeld, rolloutsv1alpha1.ReasonAborted,
				fmt.Sprintf("revision %d was aborted; this cluster keeps the revision it has", in.Revision))
		}
	}
	if in.Prior.Revision != in.Revision || !abortedBefore(in.Prior) {
		out.Events = append(out.Events, Event{Warning: true, Reason: rolloutsv1alpha1.EventReasonRolloutAborted,
			Message: fmt.Sprintf("revision %d aborted: nothing more is released; the clusters that got it are back on their last healthy revision", in.Revision)})
	}
	out.Aborted = true
	out.Status.CurrentStage, out.Status.SoakStartedAt = "", nil
	out.Waiting = fmt.Sprintf("revision %d was aborted (annotation %s); apply a new revision of the template to roll out again",
		in.Revision, rolloutsv1alpha1.AbortAnnotation)
	out.WaitingReason = rolloutsv1alpha1.ReasonAborted
	for _, s := range in.Stages {
		for _, name := range s.Clusters {
			out.Status.Clusters = append(out.Status.Clusters, states[name])
		}
	}
	slices.SortFunc(out.Status.Clusters, func(a, b rolloutsv1alpha1.ClusterStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func abortedBefore(s rolloutsv1alpha1.RolloutStatus) bool {
	for _, c := range s.Conditions {
		if c.Type == rolloutsv1alpha1.ConditionFailed {
			return c.Status == metav1.ConditionTrue && c.Reason == rolloutsv1alpha1.ReasonAborted
		}
	}
	return false
}

// markWaiting says, on every pending cluster of the stages after the
// current one, what its stage waits for.
func markWaiting(stages []Stage, states map[string]rolloutsv1alpha1.ClusterStatus, why string, set func(name, state, reason, msg string)) {
	for _, s := range stages {
		for _, name := range s.Clusters {
			if states[name].State == rolloutsv1alpha1.StatePending {
				set(name, rolloutsv1alpha1.StatePending, rolloutsv1alpha1.ReasonWaitingForStage, fmt.Sprintf("stage '%s' %s", s.Name, why))
			}
		}
	}
}

// markPending says, on every pending cluster of a stage being released, why it
// is not released yet: the pause, or its turn under maxConcurrency.
func markPending(s Stage, states map[string]rolloutsv1alpha1.ClusterStatus, paused string, set func(name, state, reason, msg string)) {
	for _, name := range s.Clusters {
		if states[name].State != rolloutsv1alpha1.StatePending {
			continue
		}
		if paused != "" {
			set(name, rolloutsv1alpha1.StatePending, rolloutsv1alpha1.ReasonWaitingForStage, fmt.Sprintf("stage '%s': the rollout is paused", s.Name))
		} else {
			set(name, rolloutsv1alpha1.StatePending, rolloutsv1alpha1.ReasonWaitingForConcurrency,
				fmt.Sprintf("stage '%s' releases %d cluster(s) at a time%s", s.Name, max(s.MaxConcurrency, 1), s.problem()))
		}
	}
}

// markHeldAfter holds every pending cluster of the failed stage and the
// stages after it: they keep the revision they have.
func markHeldAfter(stages []Stage, states map[string]rolloutsv1alpha1.ClusterStatus, failed string, set func(name, state, reason, msg string)) {
	for _, s := range stages {
		for _, name := range s.Clusters {
			if c := states[name]; c.State == rolloutsv1alpha1.StatePending || c.State == rolloutsv1alpha1.StateHeld && c.Reason != rolloutsv1alpha1.ReasonHeldElsewhere {
				set(name, rolloutsv1alpha1.StateHeld, rolloutsv1alpha1.ReasonRolloutFailed,
					fmt.Sprintf("stage '%s' failed; this cluster keeps the revision it has", failed))
			}
		}
	}
}

// since keeps a cluster's time in its state while state and revision stay.
func since(p, c rolloutsv1alpha1.ClusterStatus, now metav1.Time) metav1.Time {
	if p.State == c.State && p.Revision == c.Revision && !p.Since.IsZero() {
		return p.Since
	}
	return now
}

func failedBefore(s rolloutsv1alpha1.RolloutStatus) bool {
	for _, c := range s.Conditions {
		if c.Type == rolloutsv1alpha1.ConditionFailed {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func completedBefore(s rolloutsv1alpha1.RolloutStatus, revision int64) bool {
	if s.Revision != revision {
		return false
	}
	for _, c := range s.Conditions {
		if c.Type == rolloutsv1alpha1.ConditionCompleted {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// scaled resolves a number or percentage of total; def when unset or
// invalid (rolloutsv1alpha1.ResolveCount).
func scaled(v *intstr.IntOrString, total, def int, roundUp bool) int {
	if n, ok := rolloutsv1alpha1.ResolveCount(v, total, roundUp); ok {
		return n
	}
	return def
}

// concurrency is how many of a stage's total clusters maxConcurrency v
// releases at once: all of them when unset, at least 1. A value that
// cannot be read (stored before admission refused it) or that comes to 0
// releases one at a time, fail safe, and problem says so; never all.
func concurrency(v *intstr.IntOrString, total int) (n int, problem string) {
	if v == nil {
		return max(total, 1), ""
	}
	n, ok := rolloutsv1alpha1.ResolveCount(v, total, true)
	switch {
	case !ok:
		problem = fmt.Sprintf("maxConcurrency %q is not a whole number or a percentage", v.String())
	case n < 1 && total > 0:
		problem = fmt.Sprintf("maxConcurrency %q would release none and stall the stage", v.String())
	default:
		return n, ""
	}
	return 1, problem + ": one cluster at a time until it is fixed (write a number from 1 or a percentage like 25%)"
}
