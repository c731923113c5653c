// Package cluster owns the strings federator writes on Karmada's Cluster
// objects (cluster.karmada.io): the Ready condition's reasons and messages,
// Karmada's own (pkg/controllers/status/cluster_status_controller.go), so
// Karmada's tools and users' checks read them unchanged.
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
