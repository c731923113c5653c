// Package v1alpha1 owns the Rollout API (rollouts.federator.dev/v1alpha1):
// Rollout (namespaced, for a PropagationPolicy) and ClusterRollout (for a
// ClusterPropagationPolicy) release each new revision of the templates a
// policy claims to its clusters stage by stage, waiting for health, soak
// time, gates and promotion between stages. The policy and its templates
// are never edited: a cluster whose stage has not come is held like any
// other hold (pkg/hold's RolloutStage check).
//
// +kubebuilder:object:generate=true
// +groupName=rollouts.federator.dev
package v1alpha1
