// Package work owns the strings federator reads and writes on Karmada's
// work API: the Work, ResourceBinding and ClusterResourceBinding types are
// Karmada's own (github.com/karmada-io/karmada/pkg/apis/work), and this
// package defines no type of its own. It holds the labels, annotations and
// finalizers federator puts on Works, bindings, the objects it writes into
// member clusters and the deletion tombstones (keys.go); the condition
// types, reasons, messages and event reasons of Works and bindings
// (reasons.go); the one reading of which policy claims a template
// (claim.go); and the object a Work carries (manifest.go). Where Karmada has a string for the same purpose it is used
// unchanged, so Karmada's tools and a Karmada user's scripts and checks
// recognise federator's objects.
package work

const (
	// ManagedLabel marks an object in a member cluster as written by the hub
	// (Karmada's util.ManagedByKarmadaLabel).
	ManagedLabel = "karmada.io/managed"
	// ManagedLabelValue is ManagedLabel's value.
	ManagedLabelValue = "true"

	// ExecutionFinalizer holds a Work until its manifests are gone from the
	// member cluster (Karmada's util.ExecutionControllerFinalizer).
	ExecutionFinalizer = "karmada.io/execution-controller"
	// BindingFinalizer holds a ResourceBinding until its Works are deleted
	// (Karmada's util.BindingControllerFinalizer).
	BindingFinalizer = "karmada.io/binding-controller"
	// ClusterBindingFinalizer is BindingFinalizer for ClusterResourceBindings
	// (Karmada's util.ClusterResourceBindingControllerFinalizer).
	ClusterBindingFinalizer = "karmada.io/cluster-resource-binding-controller"

	// AppliedHashAnnotation is stamped on member objects: a hash of the
	// manifest last applied. It changes only when the desired state changes,
	// so an unchanged object is never written again (Karmada stamps the
	// template generation instead, which rewrites members on every resume).
	AppliedHashAnnotation = "work.federator.dev/applied-hash"

	// HoldReasonAnnotation, on a Work whose spec.suspendDispatching is
	// true, names what holds it: the reason its Dispatching condition
	// reports (SuspendDispatching for a suspension). Written by the binding
	// controller from pkg/hold's decision; absent when nothing holds it.
	HoldReasonAnnotation = "work.federator.dev/hold-reason"
	// HoldMessageAnnotation says, for a person, which holder holds the Work
	// and what releases it.
	HoldMessageAnnotation = "work.federator.dev/hold-message"
	// HoldGatesAnnotation, on a held Work, lists the Gates that hold it
	// (closed or missing), comma-separated "namespace/name"; absent when no
	// gate holds it. Metrics and tools read it, not the message's wording.
	HoldGatesAnnotation = "work.federator.dev/hold-gates"
	// TemplateHashAnnotation, on a Work of a template a Rollout governs,
	// is the content hash (internal/revision) of the template its manifest
	// was built from: the rollout controller counts a cluster healthy at a
	// revision only when its Work carries that revision's content.
	TemplateHashAnnotation = "work.federator.dev/template-hash"
	// RolledBackAnnotation, on a released Work, says that its manifest is
	// not the template's latest content on purpose: the Rollout that
	// governs the template put the cluster back on the revision it names
	// ("revision 3 of Rollout shop/web"). Absent otherwise.
	RolledBackAnnotation = "work.federator.dev/rolled-back"
	// TemplateVersionAnnotation, on a Work, is the resourceVersion of the
	// template its manifest was last built from. It is written along with
	// whatever else changes in the Work, never alone (a template's status
	// changing its resourceVersion costs no Work write), so it is a floor: a
	// binding controller whose cache holds an older template (just elected,
	// or the hub's API server just back) reads the template afresh instead
	// of sending a version the user has already replaced.
	TemplateVersionAnnotation = "work.federator.dev/template-version"

	// OverrideFailedAnnotation, on a Work, names the override policy and
	// rule that cannot be applied to its cluster's manifest, and why. The
	// Work then keeps the last manifest that could be built, so the member
	// keeps its last good version. Written by the binding controller beside
	// the hold annotations; absent while every override applies.
	OverrideFailedAnnotation = "work.federator.dev/override-failed"

	// BindingGenerationAnnotation, on a Work, is the generation of the
	// binding whose spec the Work was last written from. A writer that read
	// an older binding (a cache behind the API server) writes nothing and
	// reads again, so a hold decided from an old binding never overwrites
	// one decided from a newer binding.
	BindingGenerationAnnotation = "work.federator.dev/binding-generation"

	// MemberRunsAnnotation, on a Work, says what its member runs while the
	// Work carries something the member has not taken yet (held, pending,
	// refused): a JSON object, {"images":["nginx:1.25"]} for a workload,
	// and the binding generation the member's copy was written from
	// ({"bindingGeneration":"6"}) for every kind. The binding controller
	// stamps it, from the Work it is about to change, on a write it makes
	// anyway and only when that Work's Applied condition is True at its
	// generation (the member runs the manifest being replaced); otherwise
	// the Work keeps the value it had, which still names what the member
	// runs. It never causes a write of its own, is not sent to members,
	// and is read by `federator get rollout` and the dashboard
	// (pkg/copystate) only while the member does not run the Work's
	// manifest.
	MemberRunsAnnotation = "work.federator.dev/member-runs"

	// PolicyHoldsAnnotation, on a binding whose claiming policy was
	// deleted, is what held in that policy when it went: its annotations
	// that decide holds (the suspended annotations, the gates, the deletion
	// delay), as a JSON object. The detector writes it, with the policy's
	// last spec.suspension, before it lets the policy go (the policy's
	// finalizer); the binding controller keeps deciding holds from it until
	// a policy claims the template again, and the detector removes it then.
	PolicyHoldsAnnotation = "work.federator.dev/policy-holds"

	// TemplateHoldsAnnotation, on a binding, is a digest of its template's
	// annotations that decide holds (hold.AnnotationsDigest), written by the
	// detector with the rest of the binding: a change of it tells the
	// binding controller that the template's holds changed, which it takes
	// before bulk work (internal/holdqueue). Absent when there are none.
	TemplateHoldsAnnotation = "work.federator.dev/template-holds"

	// ChangedAtAnnotation, on a Work, is when the binding controller last
	// wrote a changed manifest into it (RFC 3339, sub-second): where
	// federator_dispatch_latency_seconds starts counting.
	ChangedAtAnnotation = "work.federator.dev/changed-at"

	// DeletionTimestampAnnotation, on a member object, is when its deletion
	// countdown started (RFC 3339): the hub would have deleted it then, and
	// its deletion delay defers it. Removed when the object is placed on
	// that cluster again before the delay ends (adopted). On a Pull
	// cluster's Work, it is the same for the Work's object: the hub keeps
	// the Work (held) instead of deleting it, because an agent may delete
	// the object the moment its Work goes (karmada-agent does), and deletes
	// it when the delay has passed; the binding controller removes it when
	// it writes the Work again.
	DeletionTimestampAnnotation = "federator.dev/deletion-timestamp"

	// TombstoneLabel marks the ConfigMaps in an execution namespace
	// (karmada-es-<cluster>) that record a running deletion countdown:
	// the member object, when the countdown started and the delay. They
	// outlive the template, the binding and the Work, so a controller
	// restart loses no countdown.
	TombstoneLabel = "softdelete.federator.dev/tombstone"
	// DeleteNowAnnotation, on a tombstone, asks for the countdown to end
	// now (RFC 3339, when it was asked): written by
	// `federator delete --now`, so RBAC on the hub governs who may.
	DeleteNowAnnotation = "softdelete.federator.dev/delete-now"

	// NamespaceSkipLabel, set to "true" on a hub namespace, keeps it from
	// being propagated (Karmada's namespace sync label).
	NamespaceSkipLabel = "namespace.karmada.io/skip-auto-propagation"

	// NamespaceKeptAnnotation, on the Work of a hub namespace for one
	// cluster, says why that member's namespace is kept although the hub
	// namespace is deleted or skip-labelled: what of the hub's in it is
	// held or counting down. Written by the namespace sync controller,
	// which deletes the Work (and so the member namespace) once nothing
	// keeps it.
	NamespaceKeptAnnotation = "namespace.federator.dev/kept"
	// NamespaceWorkLabel marks the Works the namespace sync controller
	// writes: its value is the hub namespace the Work is for.
	NamespaceWorkLabel = "namespace.federator.dev/name"
)
