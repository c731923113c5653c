// Package v1alpha1 owns the Gate API (gating.federator.dev/v1alpha1): a
// small namespaced object that is opened or closed, by default, by request
// (annotations, the CLI, a webhook) or by a recurring schedule, and that
// holds dispatching while it is closed (the Flux gating RFC's design, for a
// fleet). Policies and Clusters name the gates they wait for in the
// annotation gating.federator.dev/gates.
//
// +kubebuilder:object:generate=true
// +groupName=gating.federator.dev
package v1alpha1
