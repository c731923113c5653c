// Package leaving owns what deleting a member's Cluster does to the
// objects the hub placed there: the decisions the member's Work controller
// takes when a Work goes (pkg/dispatch), and what `federator unjoin` says
// of them before it deletes the Cluster, from the same rules.
package leaving

import (
	"context"
	"slices"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/countdown"
)

// OnDeletion is what a Work's deletion does to the objects it placed in
// its member.
type OnDeletion int

const (
	// RemoveObjects deletes them, or starts the countdown of those with a
	// deletion delay.
	RemoveObjects OnDeletion = iota
	// RemoveLeaving deletes them at once, from a member whose Cluster is
	// being deleted, except those with a deletion delay and namespaces,
	// which stay (Keeps).
	RemoveLeaving
	// LeaveObjects touches nothing in the member.
	LeaveObjects
)

// DeletionOf decides what deleting work does in the member of cluster (nil
// when the Cluster is gone), as Karmada's execution controller does
// (handleWorkDelete): a Work that preserves its resources on deletion
// leaves them; a Cluster being deleted while it is not Ready has its Works
// released without reaching it, so an unreachable member can still leave.
// A Cluster not Ready but staying is still tried: its Ready may lag, and a
// failure is retried.
func DeletionOf(cluster *clusterv1alpha1.Cluster, work *workv1alpha1.Work) OnDeletion {
	switch {
	case cluster == nil, ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false):
		return LeaveObjects
	case cluster.DeletionTimestamp.IsZero():
		return RemoveObjects
	case !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady):
		return LeaveObjects
	default:
		return RemoveLeaving
	}
}

// Keeps says whether an object stays in a member whose Cluster is being
// deleted, and why. An object with a deletion delay stays: its countdown
// could never be taken back, nor ended, once the member is gone, and
// deleting it at once would skip the delay its owner asked for; it stays
// as the hub left it, and is taken back if the cluster joins again. A
// namespace stays: it may hold what is kept and what is not the hub's.
func Keeps(kind string, delayed bool) (string, bool) {
	switch {
	case delayed:
		return "kept: its deletion delay cannot run in a cluster that leaves", true
	case kind == "Namespace":
		return "kept: a namespace stays in a cluster that leaves", true
	}
	return "", false
}

// Outcome is what becomes of an object a Work placed in a member when the
// member's Cluster is deleted.
type Outcome string

// What deleting a Cluster does to the objects its Works placed there.
const (
	Deleted     Outcome = "deleted"
	Preserved   Outcome = "preserved by their policy (preserveResourcesOnDeletion)"
	Delayed     Outcome = "with a deletion delay"
	Namespace   Outcome = "namespace(s) the hub propagated"
	Unreachable Outcome = "left as they are, the cluster not being Ready"
)

// OnLeave counts what deleting the Cluster of work, Ready or not, does to
// each object work placed in the member: the decisions the member's Work
// controller takes when the Work goes (DeletionOf, Keeps), for `federator
// unjoin` to say before it deletes. A manifest that cannot be read counts
// as deleted (its Work's deletion fails until it can be).
func OnLeave(ready bool, work *workv1alpha1.Work) map[Outcome]int {
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	now := metav1.Now()
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status}}}}
	out := map[Outcome]int{}
	how := DeletionOf(cluster, work)
	for _, m := range work.Spec.Workload.Manifests {
		manifest := &unstructured.Unstructured{}
		err := manifest.UnmarshalJSON(m.Raw)
		switch {
		case how == LeaveObjects && ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false):
			out[Preserved]++
		case how == LeaveObjects:
			out[Unreachable]++
		case err != nil:
			out[Deleted]++
		case manifest.GetKind() == "Namespace":
			out[Namespace]++
		default:
			if _, kept := Keeps(manifest.GetKind(), countdown.Delayed(manifest)); kept {
				out[Delayed]++
			} else {
				out[Deleted]++
			}
		}
	}
	return out
}

// BindingsTargeting names the bindings whose spec.clusters still lists
// cluster: placement leaves a Cluster being deleted out, and until the
// binding controller has placed them again it could write a Work there.
// A hub without the binding kinds has none.
func BindingsTargeting(ctx context.Context, c client.Reader, cluster string) ([]string, error) {
	targets := func(clusters []workv1alpha2.TargetCluster) bool {
		return slices.ContainsFunc(clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == cluster })
	}
	var out []string
	rbs := &workv1alpha2.ResourceBindingList{}
	if err := c.List(ctx, rbs); noBindings(err) {
		return nil, err
	}
	for _, b := range rbs.Items {
		if targets(b.Spec.Clusters) {
			out = append(out, "ResourceBinding "+b.Namespace+"/"+b.Name)
		}
	}
	crbs := &workv1alpha2.ClusterResourceBindingList{}
	if err := c.List(ctx, crbs); noBindings(err) {
		return nil, err
	}
	for _, b := range crbs.Items {
		if targets(b.Spec.Clusters) {
			out = append(out, "ClusterResourceBinding "+b.Name)
		}
	}
	return out, nil
}

// noBindings says whether err is a real error of listing bindings: a hub
// without the binding kinds (no match) has none, which is no error.
func noBindings(err error) bool {
	return err != nil && !meta.IsNoMatchError(err)
}
