package rollout

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// The stage machine's input and output.

// Stage is a stage with its clusters resolved to the placed ones.
type Stage struct {
	Name string
	// Clusters are the placed clusters of the stage, sorted.
	Clusters []string
	// MaxConcurrency is how many of them may be in flight at once (≥ 1).
	MaxConcurrency int
	// ConcurrencyProblem says why MaxConcurrency is 1 rather than what
	// spec.stages[].maxConcurrency says (a value that cannot be read); ""
	// when it is what the spec says.
	ConcurrencyProblem string
	MinSuccessTime     time.Duration
	// GateHold says why a gate the stage waits for holds it; "" when its
	// gates are open.
	GateHold string
	Pause    bool
	// Analysis judges each healthy cluster of the stage by its metrics;
	// nil when the stage has none.
	Analysis *StageAnalysis
}

// Input is everything one step of the stage machine decides from.
type Input struct {
	Now time.Time
	// Revision is the current revision.
	Revision int64
	// Initial: the revision is the first the rollout takes in; it is
	// released to every cluster at once (what runs before a Rollout
	// exists is no change to stage).
	Initial bool
	Stages  []Stage
	// Prior is the status of the last step; its per-revision fields
	// (soak, current stage) are reset by the caller when the revision
	// changes.
	Prior rolloutsv1alpha1.RolloutStatus
	// Healthy says, per cluster, that every template is updated and
	// available there at the current revision.
	Healthy map[string]bool
	// HeldElsewhere says, per cluster, what else holds its Works (a
	// suspension, a gate): a released cluster held so waits without its
	// progress deadline running.
	HeldElsewhere map[string]string
	// Paused is the reason the rollout is paused ("true" when none given);
	// "" when it is not.
	Paused string
	// Promoted names the stage a person promoted at this revision.
	Promoted         string
	ProgressDeadline time.Duration
	MaxFailures      *intstr.IntOrString
	// Rollback: a stage that fails puts its failed clusters back on their
	// last healthy revision (spec.onFailure: Rollback).
	Rollback bool
	// Aborted: a person aborted this revision: nothing more is released,
	// and every cluster that got it goes back to its last healthy revision.
	Aborted bool
	// Measurements are the measurements taken for this step, per cluster
	// (those Due named).
	Measurements map[string]rolloutsv1alpha1.Measurement
}

// Event is a transition worth telling on the Rollout.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Output is one step's result.
type Output struct {
	Status rolloutsv1alpha1.RolloutStatus
	Events []Event
	// RequeueAfter is when the machine must look again although nothing
	// changes (a soak ends, a deadline passes); 0 when not needed.
	RequeueAfter time.Duration
	// Completed: every stage has the revision.
	Completed bool
	// Failed names the stage that failed more than maxFailures; "" when
	// none did.
	Failed string
	// Aborted: the revision was aborted.
	Aborted bool
	// Waiting says what the rollout waits for, for a person.
	Waiting string
	// WaitingReason is the reason constant of Waiting.
	WaitingReason string
}

// problem is what a person should know of the stage's maxConcurrency, as
// the tail of a message: "" when nothing.
func (s Stage) problem() string {
	if s.ConcurrencyProblem == "" {
		return ""
	}
	return "; " + s.ConcurrencyProblem
}
