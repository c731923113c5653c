package policy

const (
	// SuspendedAnnotation suspends dispatching of everything a
	// PropagationPolicy, ClusterPropagationPolicy or single resource template
	// carries to every cluster. Its value is the reason a person gave, or
	// "true" when none was given.
	SuspendedAnnotation = "propagation.federator.dev/suspended"

	// FieldManager is the field manager federator uses for every write, on
	// the hub and in member clusters.
	FieldManager = "federator"
)
