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
	// EventReasonInvalidDeletionDelay: the template's deletion delay (or
	// its policy's default) does not parse; the message names the value.
	// Nothing is deleted from a member until it is fixed or removed.
	EventReasonInvalidDeletionDelay = "InvalidDeletionDelay"
	// EventReasonDeletionDelayCapped: the deletion delay is above
	// --max-deletion-delay; the maximum is used.
	EventReasonDeletionDelayCapped = "DeletionDelayCapped"
	// EventReasonPreemptPolicySucceed: a policy with preemption Always took a
	// template from the policy that claimed it (Karmada's message).
	EventReasonPreemptPolicySucceed = "PreemptPolicySucceed"
	// EventReasonPreemptPolicyFailed: the claim of a preempting policy
	// could not be written on the template (Karmada's message, with the
	// error); it is tried again.
	EventReasonPreemptPolicyFailed = "PreemptPolicyFailed"
)

// Event reasons on the hub's CustomResourceDefinitions, sent once when the
// controller starts.
const (
	// EventReasonCRDUpdated: the controller added what it needs (the
	// status subresource, schema fields) to a CustomResourceDefinition the
	// hub already had, such as a Karmada hub's own policy CRDs.
	EventReasonCRDUpdated = "CustomResourceDefinitionUpdated"
	// EventReasonCRDUpdateForbidden: such an update was refused by the
	// hub's RBAC; the message says what federator does without it.
	EventReasonCRDUpdateForbidden = "CustomResourceDefinitionUpdateForbidden"
)

// The condition federator keeps on PropagationPolicies and
// ClusterPropagationPolicies (status.conditions, which the hub's CRDs add:
// Karmada's policies have no status), with its reasons.
const (
	// ConditionClustersKnown says whether every cluster the policy names, in
	// spec.placement.clusterAffinity.clusterNames and in
	// spec.suspension.dispatchingOnClusters.clusterNames, is a registered
	// Cluster. Re-evaluated as Clusters join and leave.
	ConditionClustersKnown = "ClustersKnown"
	// ReasonClustersKnown: every name is a registered Cluster.
	ReasonClustersKnown = "ClustersKnown"
	// ReasonUnknownSuspendedCluster: the suspension list names a cluster
	// that is not registered (most likely a typo of the one meant), so every
	// cluster of the policy's bindings is held.
	ReasonUnknownSuspendedCluster = "UnknownSuspendedCluster"
	// ReasonUnknownPlacementCluster: the placement names a cluster that is
	// not registered; it gets nothing until such a Cluster joins.
	ReasonUnknownPlacementCluster = "UnknownPlacementCluster"

	// ConditionSchedulePriorityResolved, on a policy that sets
	// spec.schedulePriority, says whether the priority it names resolves
	// (the hub's PriorityClass exists); while it does not, no template the
	// policy selects gets a binding, as in Karmada. A change to False is
	// also told with a Warning Event of the condition's reason.
	ConditionSchedulePriorityResolved = "SchedulePriorityResolved"
	// ReasonPriorityClassFound: the bindings carry the PriorityClass's value.
	ReasonPriorityClassFound = "PriorityClassFound"
	// ReasonPriorityClassNotFound: the named PriorityClass does not exist.
	ReasonPriorityClassNotFound = "PriorityClassNotFound"
	// ReasonUnsupportedPriorityClassSource: PodPriorityClass or
	// FederatedPriorityClass, which Karmada does not support either.
	ReasonUnsupportedPriorityClassSource = "UnsupportedPriorityClassSource"
)
