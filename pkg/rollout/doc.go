// Package rollout owns staged rollouts: the stage machine (machine.go, a
// pure function of the last status, what is observed and the clock) and
// the controller that runs it for each Rollout and ClusterRollout. The
// controller takes in each new content of the policy's templates as a
// revision, stamps the bindings with it, and records per cluster which
// revision is released there; the binding controller holds the rest
// (pkg/hold's RolloutStage check). It never edits a policy or a template.
package rollout
