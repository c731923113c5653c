// Package policy owns federator's extensions to Karmada's policy API: the
// annotation keys users put on policies and templates, and the scheme that
// registers Karmada's API types (policy, work, cluster) beside the Kubernetes
// built-ins, so every federator client speaks the same set of kinds.
package policy
