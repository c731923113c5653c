// Package cluster owns the strings federator writes on Karmada's Cluster
// objects: the Cluster type is Karmada's own (cluster.karmada.io,
// github.com/karmada-io/karmada/pkg/apis/cluster), and this package defines
// no type of its own. It holds the finalizer that keeps a Cluster until the
// hub has let go of its member, the one Karmada's cluster controller puts
// (keys.go), and the reasons and messages of the Ready and
// CompleteAPIEnablements conditions (reasons.go), as Karmada's
// pkg/controllers/status/cluster_status_controller.go writes them. Every
// string is Karmada's, so Karmada's tools and users' checks read them
// unchanged.
package cluster

const (
	// ReasonClusterReady: the member's API server answers (Ready=True).
	ReasonClusterReady = "ClusterReady"
	// MessageClusterReady is Karmada's message for ReasonClusterReady.
	MessageClusterReady = "cluster is healthy and ready to accept workloads"
	// ReasonClusterNotReachable: the member's API server does not answer
	// (Ready=False); also the event reason of that transition.
	ReasonClusterNotReachable = "ClusterNotReachable"
	// MessageClusterNotReachable is Karmada's message for
	// ReasonClusterNotReachable.
	MessageClusterNotReachable = "cluster is not reachable"
)

// Reasons and messages of the CompleteAPIEnablements condition, which says
// whether status.apiEnablements lists everything the member serves.
const (
	// ReasonAPIEnablementsComplete: discovery read every API group
	// (CompleteAPIEnablements=True).
	ReasonAPIEnablementsComplete = "Complete"
	// MessageAPIEnablementsComplete is Karmada's message for
	// ReasonAPIEnablementsComplete.
	MessageAPIEnablementsComplete = "collected complete APIEnablements from the cluster"
	// ReasonAPIEnablementsPartial: some API groups could not be read (an
	// aggregated API server that is down, say); status.apiEnablements holds
	// those that were (CompleteAPIEnablements=False).
	ReasonAPIEnablementsPartial = "Partial"
	// MessageAPIEnablementsPartial is Karmada's message for
	// ReasonAPIEnablementsPartial, with the number of group versions read.
	MessageAPIEnablementsPartial = "might collect partial APIEnablements(%d) from the cluster"
	// ReasonAPIEnablementsEmpty: discovery read nothing;
	// status.apiEnablements is empty (CompleteAPIEnablements=False).
	ReasonAPIEnablementsEmpty = "Empty"
	// MessageAPIEnablementsEmpty is Karmada's message for
	// ReasonAPIEnablementsEmpty.
	MessageAPIEnablementsEmpty = "collected empty APIEnablements from the cluster"
)

// Reasons and messages a Pull cluster's Ready takes on the hub when its
// agent stops reporting: neither its status nor its Lease (LeaseNamespace)
// changed for the monitor grace period, as Karmada's cluster controller
// writes them.
const (
	// ReasonClusterStatusUnknown: the agent reported once, then stopped
	// (Ready=Unknown).
	ReasonClusterStatusUnknown = "ClusterStatusUnknown"
	// MessageClusterStatusUnknown is Karmada's message for
	// ReasonClusterStatusUnknown.
	MessageClusterStatusUnknown = "Cluster status controller stopped posting cluster status."
	// ReasonClusterStatusNeverUpdated: no agent ever reported (Ready=Unknown).
	ReasonClusterStatusNeverUpdated = "ClusterStatusNeverUpdated"
	// MessageClusterStatusNeverUpdated is Karmada's message for
	// ReasonClusterStatusNeverUpdated.
	MessageClusterStatusNeverUpdated = "Cluster status controller never posted cluster status."
)

// LeaseNamespace holds, on the hub, the Lease (named after its cluster)
// that a Pull cluster's agent renews while it runs: Karmada's
// karmada-cluster.
const LeaseNamespace = "karmada-cluster"
