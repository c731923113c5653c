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

	// FieldManager is the field manager federator uses for every write, on
	// the hub and in member clusters.
	FieldManager = "federator"
)
