package policy

const (
	// SuspendedAnnotation suspends dispatching of everything a
	// PropagationPolicy, ClusterPropagationPolicy or single resource template
	// carries to every cluster. Its value is the reason a person gave, or
	// "true" when none was given.
	SuspendedAnnotation = "propagation.federator.dev/suspended"

	// ClusterSuspendedAnnotationPrefix, followed by a cluster name, suspends
	// dispatching to that cluster only, on a PropagationPolicy,
	// ClusterPropagationPolicy or single resource template. Its value is
	// the reason a person gave ("true" when none). Like SuspendedAnnotation
	// it changes no generation.
	ClusterSuspendedAnnotationPrefix = "suspended.propagation.federator.dev/"

	// DeletionDelayAnnotation, on a resource template, is how long its
	// copy in a member counts down before it is deleted once the hub would
	// delete it (a Go duration: 24h, 90m); on a PropagationPolicy or
	// ClusterPropagationPolicy it is the default for every template the
	// policy places, the template's own value winning. It travels to the
	// member copy with the value in force there.
	DeletionDelayAnnotation = "federator.dev/deletion-delay"

	// FieldManager is the field manager federator uses for every write, on
	// the hub and in member clusters.
	FieldManager = "federator"
)

// The finalizers Karmada's webhook puts on policies, here put by the
// detector: a policy being deleted stays until the detector has carried
// what held in it onto the bindings it claimed (work.federator.dev/policy-holds).
const (
	PropagationPolicyFinalizer        = "karmada.io/propagation-policy-controller"
	ClusterPropagationPolicyFinalizer = "karmada.io/cluster-propagation-policy-controller"
)
