package work

import workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"

// Condition types, reasons, messages and event reasons on Works and on
// ResourceBindings / ClusterResourceBindings. Where Karmada has the string
// (pkg/apis/work, pkg/events, pkg/controllers/execution) it is used
// unchanged: users' checks and Karmada's tools read them.

// Work conditions.
const (
	// ConditionDispatching says whether a Work is dispatched to its member
	// or held (Karmada's workv1alpha1.WorkDispatching).
	ConditionDispatching = "Dispatching"
	// ConditionApplied says whether the Work's manifests are applied in its
	// member (Karmada's workv1alpha1.WorkApplied).
	ConditionApplied = "Applied"
)

// Reasons and messages of the Work Dispatching condition.
const (
	// ReasonSuspendDispatching: the Work is held by a suspension (the
	// policy's spec.suspension or the suspended annotation). Karmada's
	// string; its message is Karmada's too, whatever suspended it: the
	// Work's hold-message annotation says which holder and why.
	ReasonSuspendDispatching = "SuspendDispatching"
	// MessageSuspendDispatching is Karmada's message for a suspended Work.
	MessageSuspendDispatching = "Work dispatching is in a suspended state."
	// ReasonDispatching: nothing holds the Work.
	ReasonDispatching = "Dispatching"
	// MessageDispatching is Karmada's message for a Work being dispatched.
	MessageDispatching = "Work is being dispatched to member clusters."
	// ReasonGateClosed: the Work waits for a closed (or missing) Gate; the
	// message names the gate and who lists it.
	ReasonGateClosed = "GateClosed"
	// ReasonRolloutStage: the Work waits for its cluster's stage of a
	// Rollout; the message names the Rollout, the stage and what it waits
	// for.
	ReasonRolloutStage = "RolloutStage"
	// ReasonDeletionCountdown: the Work of an object no longer placed on a
	// Pull cluster, kept by the hub until its deletion delay has passed
	// (nothing more is applied; its object stays as it is); the message
	// says when it is deleted and how to keep it.
	ReasonDeletionCountdown = "DeletionCountdown"
)

// Reasons and messages of the Work Applied condition (Karmada's execution
// controller).
const (
	// ReasonAppliedSuccessful: every manifest is applied in the member.
	ReasonAppliedSuccessful = "AppliedSuccessful"
	// MessageAppliedSuccessful is Karmada's message for ReasonAppliedSuccessful.
	MessageAppliedSuccessful = "Manifest has been successfully applied"
	// ReasonAppliedFailed: some manifest could not be applied; the message
	// says which and why.
	ReasonAppliedFailed = "AppliedFailed"
)

// ReasonApplyOverridePolicyFailed is what `federator get rollout` reports
// for a cluster whose Work carries OverrideFailedAnnotation: Karmada's event
// reason for an override policy that cannot be applied
// (events.EventReasonApplyOverridePolicyFailed).
const ReasonApplyOverridePolicyFailed = "ApplyOverridePolicyFailed"

// Event reasons on Works.
const (
	// EventReasonWorkDispatching is sent when a Work's Dispatching condition
	// changes, with the condition's message.
	EventReasonWorkDispatching = "WorkDispatching"
	// EventReasonSyncFailed is sent when a Work stops being applied.
	EventReasonSyncFailed = "SyncFailed"
	// EventReasonSyncSucceed is sent when a Work becomes applied.
	EventReasonSyncSucceed = "SyncSucceed"
)

// Binding conditions.
const (
	// ConditionScheduled says whether the binding's placement found its
	// target clusters.
	ConditionScheduled = workv1alpha2.Scheduled
	// ConditionFullyApplied says whether every target's Work is applied.
	ConditionFullyApplied = workv1alpha2.FullyApplied
	// ConditionWorksSynced says whether the binding's Works are written as
	// its placement and holds want them (federator's; Karmada reports this
	// only with events). It makes SyncWorkFailed a transition, not a
	// repeated warning.
	ConditionWorksSynced = "WorksSynced"
	// ConditionApproved says, on a binding whose policy or target clusters
	// list gates, whether every such gate is open.
	ConditionApproved = "Approved"
	// ConditionDispatching, on a binding (federator's; Karmada has it on
	// Works only), is False while anything holds one of its target
	// clusters, with the first hold's Work reason and, for each held
	// cluster, what holds it (pkg/hold's Record): GitOps tools read it to
	// tell a cluster held on purpose from one that is slow or failing
	// (config/argocd's ResourceBinding health check). True, with
	// ReasonDispatching and MessageBindingDispatching, when nothing holds.
	// It says what the binding's Works were last written with.
	ConditionBindingDispatching = ConditionDispatching
	// MessageBindingDispatching is the binding's Dispatching=True message.
	MessageBindingDispatching = "Nothing holds the binding's target clusters."
)

// Reasons and messages of binding conditions.
const (
	// ReasonScheduled: placement found target clusters (Scheduled=True).
	ReasonScheduled = workv1alpha2.BindingReasonSuccess
	// MessageScheduled is Karmada's message for ReasonScheduled.
	MessageScheduled = "Binding has been scheduled successfully."
	// ReasonNoClusterFit: no cluster matched the placement (Scheduled=False).
	ReasonNoClusterFit = workv1alpha2.BindingReasonNoClusterFit
	// MessageNoClusterFit is Karmada's FitError message for
	// ReasonNoClusterFit (pkg/scheduler/framework/types.go): the number of
	// registered clusters, then how many clusters each filter kept out,
	// sorted, e.g. "0/3 clusters are available: 1 cluster(s) did not have
	// the API resource, 2 cluster(s) did not match the placement cluster
	// affinity constraint."
	MessageNoClusterFit = "0/%d clusters are available: %s."
	// MessageNoClusterExists completes MessageNoClusterFit when no cluster
	// is registered (or every one is being deleted), as in Karmada.
	MessageNoClusterExists = "no cluster exists"
	// FilterAffinityMismatch is what Karmada's ClusterAffinity filter says
	// of the clusters the placement does not select.
	FilterAffinityMismatch = "cluster(s) did not match the placement cluster affinity constraint"
	// FilterAPIMissing is what Karmada's APIEnablement filter says of the
	// clusters that do not serve the template's kind. federator writes it
	// into the Scheduled message also when other clusters fit (Karmada then
	// says only MessageScheduled), followed by which clusters and which
	// kind, since a person has to install the API there.
	FilterAPIMissing = "cluster(s) did not have the API resource"
	// ReasonUnschedulable: the placement itself cannot be evaluated; the
	// message says why (Scheduled=False).
	ReasonUnschedulable = workv1alpha2.BindingReasonUnschedulable
	// ReasonFullyApplied: every Work is applied (FullyApplied=True).
	ReasonFullyApplied = "FullyAppliedSuccess"
	// MessageFullyApplied is Karmada's message for ReasonFullyApplied.
	MessageFullyApplied = "All works have been successfully applied"
	// ReasonNotFullyApplied: some Work is not applied (FullyApplied=False).
	ReasonNotFullyApplied = "FullyAppliedFailed"
	// MessageNotFullyApplied is Karmada's message for ReasonNotFullyApplied.
	MessageNotFullyApplied = "Failed to apply all works, see status.aggregatedStatus for details"
	// ReasonWorksSynced: every Work is written (WorksSynced=True).
	ReasonWorksSynced = "WorksSynced"
	// MessageWorksSynced is the message for ReasonWorksSynced.
	MessageWorksSynced = "Works are written for every target cluster"
	// ReasonUnclaimed: the policy that claimed the template is gone, so the
	// Works are kept as last written, with the holds and the deletion
	// delay they had, and no longer follow the template until a policy
	// claims it again (WorksSynced=True).
	ReasonUnclaimed = "Unclaimed"
	// ReasonSyncWorkFailed: some Work could not be written; the message says
	// which cluster and why (WorksSynced=False).
	ReasonSyncWorkFailed = "SyncWorkFailed"
	// ReasonGatesOpened: every gate the binding waits for is open
	// (Approved=True).
	ReasonGatesOpened = "GatesOpened"
	// MessageGatesOpened is the message for ReasonGatesOpened.
	MessageGatesOpened = "every gate is open"
)

// Event reasons on bindings (Karmada's pkg/events).
const (
	// EventReasonScheduleBindingFailed is sent when Scheduled turns False.
	EventReasonScheduleBindingFailed = "ScheduleBindingFailed"
	// EventReasonSyncWorkFailed is sent when WorksSynced turns False or its
	// message changes.
	EventReasonSyncWorkFailed = "SyncWorkFailed"
)

// The binding condition about deletion delays, with its reasons: absent
// when neither the template nor its policy sets
// federator.dev/deletion-delay.
const (
	// ConditionDeletionDelay says whether the deletion delay in force for
	// the binding's template can be honoured as written.
	ConditionDeletionDelay = "DeletionDelay"
	// ReasonDeletionDelayValid: the delay parses and is within
	// --max-deletion-delay (DeletionDelay=True).
	ReasonDeletionDelayValid = "DeletionDelayValid"
	// ReasonDeletionDelayCapped: the delay is above --max-deletion-delay
	// and the maximum is used instead (DeletionDelay=True).
	ReasonDeletionDelayCapped = "DeletionDelayCapped"
	// ReasonInvalidDeletionDelay: the delay does not parse as a positive
	// Go duration (DeletionDelay=False); nothing is deleted from a member
	// until it is fixed or removed.
	ReasonInvalidDeletionDelay = "InvalidDeletionDelay"
)

// Event reasons of deletion countdowns, sent on the binding (on its policy
// when the binding is gone).
const (
	// EventReasonSoftDeletionStarted: an object's countdown started in a
	// member; the message says when it will be deleted.
	EventReasonSoftDeletionStarted = "SoftDeletionStarted"
	// EventReasonSoftDeletionCancelled: the countdown ended without a
	// deletion (placed there again, or the member left).
	EventReasonSoftDeletionCancelled = "SoftDeletionCancelled"
	// EventReasonSoftDeletionCompleted: the object was deleted from the
	// member (its delay passed, or it was forced).
	EventReasonSoftDeletionCompleted = "SoftDeletionCompleted"
	// EventReasonSoftDeletionKept: the object's delay is invalid, so it is
	// kept in the member until the template comes back or it is forced.
	EventReasonSoftDeletionKept = "SoftDeletionKept"
)

// Event reasons of namespace sync, sent on the hub Namespace (on its Work
// for the cluster once the Namespace is being deleted or gone).
const (
	// EventReasonNamespaceKept: a member's namespace stays although the hub
	// namespace is deleted or skip-labelled, because something of the
	// hub's in it is held or counting down; the message names it.
	EventReasonNamespaceKept = "NamespaceKept"
	// EventReasonNamespaceReleased: a member namespace that was kept is
	// removed, nothing keeping it any more.
	EventReasonNamespaceReleased = "NamespaceReleased"
)
