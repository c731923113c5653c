package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// Step computes the rollout's next status from the last one and what is
// observed now: which clusters are released, healthy, failed; which stage
// is current; its soak. It decides; the controller writes.
func Step(in Input) Output {
	out := Output{Status: rolloutsv1alpha1.RolloutStatus{Revision: in.Revision, PausedAt: in.Prior.PausedAt,
		SoakStartedAt: in.Prior.SoakStartedAt}}
	now := metav1.NewTime(in.Now)
	// The soak clock stops while paused: a resume moves its start by the
	// time spent paused.
	switch {
	case in.Paused != "" && out.Status.PausedAt == nil:
		out.Status.PausedAt = &now
	case in.Paused == "" && out.Status.PausedAt != nil:
		if out.Status.SoakStartedAt != nil {
			moved := soakStart(out.Status.SoakStartedAt.Add(in.Now.Sub(out.Status.PausedAt.Time)))
			out.Status.SoakStartedAt = &moved
		}
		out.Status.PausedAt = nil
	}
	prior := map[string]rolloutsv1alpha1.ClusterStatus{}
	for _, c := range in.Prior.Clusters {
		prior[c.Name] = c
	}
	requeue := func(d time.Duration) {
		if d > 0 && (out.RequeueAfter == 0 || d < out.RequeueAfter) {
			out.RequeueAfter = d
		}
	}
	// Each cluster's own state at the current revision.
	states := map[string]rolloutsv1alpha1.ClusterStatus{}
	for _, s := range in.Stages {
		for _, name := range s.Clusters {
			p := prior[name]
			c := rolloutsv1alpha1.ClusterStatus{Name: name, Stage: s.Name, Revision: p.Revision, LastHealthyRevision: p.LastHealthyRevision}
			if in.Initial {
				c.Revision = in.Revision
			}
			switch {
			case p.State == rolloutsv1alpha1.StateRolledBack && in.Prior.Revision == in.Revision && !in.Initial:
				// Rolled back stays so for the rest of the revision.
				c = p
			case c.Revision != in.Revision:
				c.State, c.Reason = rolloutsv1alpha1.StatePending, rolloutsv1alpha1.ReasonWaitingForStage
				if p.State == rolloutsv1alpha1.StateHealthy && p.Revision == c.Revision {
					// It leaves a revision that was healthy there.
					c.LastHealthyRevision = p.Revision
				}
			case p.Revision == in.Revision && p.State == rolloutsv1alpha1.StateFailed:
				c = p
			case in.Healthy[name]:
				c.State, c.Reason, c.Message = rolloutsv1alpha1.StateHealthy, rolloutsv1alpha1.ReasonHealthy, ""
				if analysed(in, s) {
					var prev *rolloutsv1alpha1.ClusterAnalysis
					if p.Revision == in.Revision && in.Prior.Revision == in.Revision {
						prev = p.Analysis
					}
					events, next := analyse(in, s, prev, &c)
					out.Events = append(out.Events, events...)
					requeue(next)
				}
			case p.Revision == in.Revision && (p.State == rolloutsv1alpha1.StateHealthy || p.Reason == rolloutsv1alpha1.ReasonUnhealthyAgain ||
				p.Reason == rolloutsv1alpha1.ReasonAnalysisRunning || p.Reason == rolloutsv1alpha1.ReasonAnalysisInconclusive):
				// It was healthy at this revision: a blip is no failure to
				// progress, but its stage is not settled until it is
				// healthy again.
				c.State, c.Reason = rolloutsv1alpha1.StateProgressing, rolloutsv1alpha1.ReasonUnhealthyAgain
				c.Message = "was healthy at this revision and is not now; waiting for it to be healthy again"
			default:
				c.State, c.Reason = rolloutsv1alpha1.StateProgressing, rolloutsv1alpha1.ReasonReleased
				c.Message = "released; waiting for it to become healthy"
			}
			if c.Analysis == nil && c.Revision == in.Revision && p.Revision == in.Revision && in.Prior.Revision == in.Revision {
				// Not measured while not healthy; what it measured so far
				// stays.
				c.Analysis = p.Analysis
			}
			if why := in.HeldElsewhere[name]; why != "" && c.State == rolloutsv1alpha1.StateProgressing {
				c.State, c.Reason, c.Message = rolloutsv1alpha1.StateHeld, rolloutsv1alpha1.ReasonHeldElsewhere, why
			}
			c.Stage = s.Name
			c.Since = since(p, c, now)
			if c.State == rolloutsv1alpha1.StateProgressing && c.Reason == rolloutsv1alpha1.ReasonReleased && in.ProgressDeadline > 0 {
				left := c.Since.Add(in.ProgressDeadline).Sub(in.Now)
				if left <= 0 {
					c.State, c.Reason, c.Since = rolloutsv1alpha1.StateFailed, rolloutsv1alpha1.ReasonProgressDeadlineExceeded, now
					c.Message = fmt.Sprintf("not healthy within the progress deadline (%s) of revision %d", in.ProgressDeadline, in.Revision)
					out.Events = append(out.Events, Event{Warning: true, Reason: rolloutsv1alpha1.EventReasonClusterFailed,
						Message: fmt.Sprintf("cluster %s (stage %s) failed: %s", name, s.Name, c.Message)})
				} else {
					requeue(left)
				}
			}
			states[name] = c
		}
	}

	// set changes a cluster's state; its Since is kept when the state and
	// revision are those of the last step (a cluster held step after step
	// is held since it was first held).
	set := func(name, state, reason, msg string) {
		c := states[name]
		c.State, c.Reason, c.Message = state, reason, msg
		c.Since = since(prior[name], c, now)
		states[name] = c
	}
	// release gives a cluster the current revision; the one it leaves is
	// its last healthy one if it was healthy there.
	release := func(name string) {
		c := states[name]
		if p := prior[name]; p.State == rolloutsv1alpha1.StateHealthy && p.Revision > 0 && p.Revision < in.Revision {
			c.LastHealthyRevision = p.Revision
		}
		c.Revision = in.Revision
		states[name] = c
		set(name, rolloutsv1alpha1.StateProgressing, rolloutsv1alpha1.ReasonReleased, "released; waiting for it to become healthy")
	}
	priorStage := in.Prior.CurrentStage
	// The stages the revision already went through: those before the
	// last step's current stage; all of them for the initial revision, or
	// when no stage was current although the revision was released
	// already (it went through every stage; a new revision has no cluster
	// yet). They do not start, soak or complete again.
	donePrefix := 0
	switch {
	case in.Initial, priorStage == "" && slices.ContainsFunc(in.Prior.Clusters, func(c rolloutsv1alpha1.ClusterStatus) bool { return c.Revision == in.Revision }):
		donePrefix = len(in.Stages)
	case priorStage != "":
		donePrefix = max(slices.IndexFunc(in.Stages, func(s Stage) bool { return s.Name == priorStage }), 0)
	}
	if in.Aborted {
		return abort(in, out, states, set)
	}
	// catchingUp are clusters of stages already done that are not
	// settled: newly placed ones (or, for the initial revision, any).
	var catchingUp []string
	stopped := false
	for i, s := range in.Stages {
		var released, healthy, failed, inFlight int
		var failedNames []string
		for _, name := range s.Clusters {
			switch states[name].State {
			case rolloutsv1alpha1.StateHealthy:
				released++
				healthy++
			case rolloutsv1alpha1.StateFailed, rolloutsv1alpha1.StateRolledBack:
				released++
				failed++
				failedNames = append(failedNames, name)
			case rolloutsv1alpha1.StateProgressing:
				released++
				inFlight++
			case rolloutsv1alpha1.StateHeld:
				if states[name].Revision == in.Revision {
					released++
					inFlight++
				}
			}
		}
		if len(s.Clusters) == 0 {
			continue
		}
		if maxFail := scaled(in.MaxFailures, len(s.Clusters), 0, false); failed > maxFail {
			out.Failed = s.Name
			out.Status.CurrentStage = s.Name
			out.Waiting = fmt.Sprintf("stage '%s' failed: %d of %d clusters failed (%s), more than maxFailures %d; apply a fixed revision of the template, or `federator rollout undo`",
				s.Name, failed, len(s.Clusters), strings.Join(failedNames, ", "), maxFail)
			out.WaitingReason = rolloutsv1alpha1.ReasonStageFailed
			if priorStage != s.Name || !failedBefore(in.Prior) {
				out.Events = append(out.Events, Event{Warning: true, Reason: rolloutsv1alpha1.EventReasonRolloutFailed,
					Message: fmt.Sprintf("revision %d: %s", in.Revision, out.Waiting)})
			}
			out.Status.SoakStartedAt = nil
			stopped = true
			if in.Rollback {
				out.Events = append(out.Events, rollBack(in, s.Clusters, states, set,
					fmt.Sprintf("stage '%s' failed (onFailure: Rollback)", s.Name))...)
			}
			markHeldAfter(in.Stages[i:], states, s.Name, set)
			break
		}
		if i < donePrefix {
			// A stage already done: its gates, pause and soak are behind
			// it. A cluster newly placed in it is released
			// (maxConcurrency at a time) without sending the rollout
			// back to it.
			limit := max(s.MaxConcurrency, 1)
			for _, name := range s.Clusters {
				if in.Paused != "" || inFlight >= limit {
					break
				}
				if states[name].State == rolloutsv1alpha1.StatePending {
					release(name)
					inFlight++
					if in.ProgressDeadline > 0 {
						requeue(in.ProgressDeadline)
					}
				}
			}
			markPending(s, states, in.Paused, set)
			for _, name := range s.Clusters {
				if st := states[name].State; st == rolloutsv1alpha1.StatePending || st == rolloutsv1alpha1.StateProgressing {
					catchingUp = append(catchingUp, name)
				}
			}
			continue
		}
		if released == len(s.Clusters) && inFlight == 0 {
			// Settled: soak, then the next stage.
			if s.MinSuccessTime > 0 {
				start := out.Status.SoakStartedAt
				if priorStage != s.Name || start == nil {
					begin := soakStart(now.Time)
					if out.Status.PausedAt != nil {
						begin = soakStart(out.Status.PausedAt.Time)
					}
					start = &begin
				}
				end := out.Status.PausedAt
				if end == nil {
					end = &now
				}
				if elapsed := end.Sub(start.Time); elapsed < s.MinSuccessTime {
					out.Status.CurrentStage, out.Status.SoakStartedAt = s.Name, start
					left := s.MinSuccessTime - elapsed
					out.Waiting = fmt.Sprintf("stage '%s' is healthy and soaks for %s more (minSuccessTime %s)", s.Name, min(left, s.MinSuccessTime).Round(time.Second), s.MinSuccessTime)
					out.WaitingReason = rolloutsv1alpha1.ReasonStageSoaking
					if in.Paused == "" {
						requeue(left)
					}
					stopped = true
					markWaiting(in.Stages[i+1:], states, fmt.Sprintf("waits for stage '%s' to soak", s.Name), set)
					break
				}
			}
			if priorStage == s.Name {
				out.Events = append(out.Events, Event{Reason: rolloutsv1alpha1.EventReasonStageCompleted,
					Message: fmt.Sprintf("revision %d: stage '%s' completed (%d of %d clusters healthy)", in.Revision, s.Name, healthy, len(s.Clusters))})
			}
			out.Status.SoakStartedAt = nil
			continue
		}
		out.Status.CurrentStage = s.Name
		// Not settled (not yet, or a cluster turned unhealthy): the soak
		// starts over once it is.
		out.Status.SoakStartedAt = nil
		stopped = true
		if released == 0 {
			wait, reason := "", ""
			switch {
			case in.Paused != "":
				wait, reason = "the rollout is paused", rolloutsv1alpha1.ReasonSuspended
			case s.GateHold != "":
				wait, reason = s.GateHold, rolloutsv1alpha1.ReasonWaitingForGate
			case s.Pause && in.Promoted != s.Name:
				wait = fmt.Sprintf("stage '%s' pauses until promoted: `federator rollout promote` starts it", s.Name)
				reason = rolloutsv1alpha1.ReasonWaitingForPromotion
			}
			if wait != "" {
				out.Waiting, out.WaitingReason = wait, reason
				for _, name := range s.Clusters {
					set(name, rolloutsv1alpha1.StatePending, rolloutsv1alpha1.ReasonWaitingForStage, fmt.Sprintf("stage '%s': %s", s.Name, wait))
				}
				markWaiting(in.Stages[i+1:], states, fmt.Sprintf("waits for stage '%s'", s.Name), set)
				break
			}
		}
		pause := analysisPause(s, states)
		if in.Paused == "" && pause == "" {
			limit := max(s.MaxConcurrency, 1)
			newly := 0
			for _, name := range s.Clusters {
				if inFlight >= limit {
					break
				}
				if states[name].State == rolloutsv1alpha1.StatePending {
					release(name)
					inFlight++
					newly++
					if in.ProgressDeadline > 0 {
						requeue(in.ProgressDeadline)
					}
				}
			}
			if released == 0 && newly > 0 {
				out.Events = append(out.Events, Event{Reason: rolloutsv1alpha1.EventReasonStageStarted,
					Message: fmt.Sprintf("revision %d: stage '%s' started (%d of %d clusters released)", in.Revision, s.Name, newly, len(s.Clusters))})
			}
		}
		markPending(s, states, in.Paused, set)
		switch {
		case in.Paused != "":
			out.Waiting, out.WaitingReason = "the rollout is paused", rolloutsv1alpha1.ReasonSuspended
		case pause != "":
			out.Waiting = fmt.Sprintf("stage '%s' pauses, its analysis is inconclusive: %s", s.Name, pause)
			out.WaitingReason = rolloutsv1alpha1.ReasonAnalysisInconclusive
			for _, name := range s.Clusters {
				if states[name].State == rolloutsv1alpha1.StatePending {
					set(name, rolloutsv1alpha1.StatePending, rolloutsv1alpha1.ReasonWaitingForStage,
						fmt.Sprintf("stage '%s' pauses: its analysis is inconclusive", s.Name))
				}
			}
		default:
			out.Waiting = fmt.Sprintf("stage '%s' is being released: %d of %d clusters healthy%s", s.Name, healthy, len(s.Clusters), s.problem())
			out.WaitingReason = rolloutsv1alpha1.ReasonStageProgressing
		}
		markWaiting(in.Stages[i+1:], states, fmt.Sprintf("waits for stage '%s' to be healthy", s.Name), set)
		break
	}
	switch {
	case stopped:
	case len(catchingUp) > 0:
		// Every stage is done but clusters of them are still being
		// released.
		out.Status.CurrentStage = ""
		out.Status.SoakStartedAt = nil
		if in.Paused != "" {
			out.Waiting, out.WaitingReason = "the rollout is paused", rolloutsv1alpha1.ReasonSuspended
		} else {
			what := "clusters newly placed in stages already done"
			if in.Initial {
				what = "every cluster at once (the first revision)"
			}
			out.Waiting = fmt.Sprintf("revision %d is being released to %s: waiting for %s to become healthy", in.Revision, what, strings.Join(catchingUp, ", "))
			out.WaitingReason = rolloutsv1alpha1.ReasonStageProgressing
		}
	default:
		out.Completed = true
		out.Status.CurrentStage = ""
		out.Status.SoakStartedAt = nil
		if !completedBefore(in.Prior, in.Revision) && !in.Initial {
			out.Events = append(out.Events, Event{Reason: rolloutsv1alpha1.EventReasonRolloutCompleted,
				Message: fmt.Sprintf("revision %d reached every stage", in.Revision)})
		}
	}
	for _, s := range in.Stages {
		for _, name := range s.Clusters {
			out.Status.Clusters = append(out.Status.Clusters, states[name])
		}
	}
	slices.SortFunc(out.Status.Clusters, func(a, b rolloutsv1alpha1.ClusterStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// soakStart is when a soak that begins at t counts from: t rounded up to
// the second, as the status stores it to the second (metav1.Time). Rounded
// down, a soak would end up to a second before its minSuccessTime, and
// release the next stage early; rounded up, it lasts up to a second more.
func soakStart(t time.Time) metav1.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	return metav1.NewTime(t)
}
