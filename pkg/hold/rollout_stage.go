package hold

import (
	workkeys "github.com/federator-dev/federator/apis/work"
)

// Rollout is what the RolloutStage check knows of the Rollout that governs
// the template's policy.
type Rollout struct {
	// Name names it for a person: "Rollout shop/web".
	Name string
	// Released says, per cluster, that the cluster's stage has reached the
	// revision that took in the template's current content; absent or
	// false: held.
	Released map[string]bool
	// Waiting says, per held cluster, what its stage waits for ("stage
	// 'rest' waits for stage 'canary' to be healthy"); "" when not known.
	Waiting map[string]string
	// Hashes are, per cluster, the content hash the decision is for: what
	// the cluster gets, the template with its overrides
	// (internal/revision); the Works carry it, so the rollout controller
	// judges each cluster's health at that content. Absent for a cluster
	// whose overrides cannot be applied.
	Hashes map[string]string
}

// rolloutStageCheck: a cluster the Rollout has not released the template's
// current content to keeps what it has. Fail safe: a content the Rollout
// has not taken in yet is released to no cluster.
var rolloutStageCheck = Check{Name: "RolloutStage", Holds: func(in Input, cluster string) (Hold, bool) {
	if in.Rollout == nil || in.Rollout.Released[cluster] {
		return Hold{}, false
	}
	why := in.Rollout.Waiting[cluster]
	if why == "" {
		why = "the rollout has not reached this cluster's stage"
	}
	return Hold{Reason: workkeys.ReasonRolloutStage,
		Message: "held by " + in.Rollout.Name + ": " + why + "; `federator rollout status` shows the stages",
		Note:    why}, true
}}
