package policy

// Event reasons on resource templates and on PropagationPolicies /
// ClusterPropagationPolicies. Karmada's strings (pkg/events) where Karmada
// has the event.
const (
	// EventReasonApplyPolicyFailed: a template's policy could not be applied
	// (e.g. the policy is invalid); the template is left as it was.
	EventReasonApplyPolicyFailed = "ApplyPolicyFailed"
	// EventReasonApplyPolicySucceed: a template got its binding.
	EventReasonApplyPolicySucceed = "ApplyPolicySucceed"
	// EventReasonInvalidPolicy: a policy's spec is refused; the message names
	// the field and nothing it propagates changes until it is fixed.
	EventReasonInvalidPolicy = "InvalidPolicy"
	// EventReasonUnknownResourceKind: a policy selects a kind the hub does
	// not serve; retried until it is served.
	EventReasonUnknownResourceKind = "UnknownResourceKind"
	// EventReasonUnknownCluster: a policy names a cluster that is not
	// registered.
	EventReasonUnknownCluster = "UnknownCluster"
	// EventReasonDispatchingSuspended: something now holds some or all of a
	// template's clusters; the message says where and why.
	EventReasonDispatchingSuspended = "DispatchingSuspended"
	// EventReasonDispatchingResumed: nothing holds a template's clusters any
	// more.
	EventReasonDispatchingResumed = "DispatchingResumed"
)
