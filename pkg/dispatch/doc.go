// Package dispatch owns the last step of the data path: a Work on the hub
// becomes objects in its member cluster. It applies a Work's manifests with
// server-side apply, or holds them and says why (suspended), deletes them
// when the Work goes (never blocked by a hold), and collects the member
// objects' status back into the Work. Every write to a member goes
// through the clients Members hands out, which refuse it while a Freeze
// holds the member (freeze.go). Every member has its own controller,
// queue and client, so one slow or unreachable member never delays another.
// It owns a member's time in the federation too, as Karmada's cluster
// controller does: the execution namespace and the cluster finalizer, and,
// when the Cluster is deleted, deleting its Works and what they placed in
// the member before the Cluster may go (cluster_finalizer.go, leaving.go).
// The hub's --controllers flag calls this controller execution, Karmada's
// name for it (its events come from execution-controller too), while each
// member's controller logs as dispatch-<member> (the Cluster finalizer's
// as dispatch-clusters).
package dispatch
