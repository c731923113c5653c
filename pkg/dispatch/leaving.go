package dispatch

import (
	"context"
	"fmt"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/finalizers"
)

// onDeletion is what a Work's deletion does to the objects it placed in
// its member.
type onDeletion int

const (
	// removeObjects deletes them, or starts the countdown of those with a
	// deletion delay.
	removeObjects onDeletion = iota
	// removeLeaving deletes them at once, from a member whose Cluster is
	// being deleted, except those with a deletion delay and namespaces,
	// which stay (leavingKeeps).
	removeLeaving
	// leaveObjects touches nothing in the member.
	leaveObjects
)

// deletionOf decides what deleting work does in the member of cluster (nil
// when the Cluster is gone), as Karmada's execution controller does
// (handleWorkDelete): a Work that preserves its resources on deletion
// leaves them; a Cluster being deleted while it is not Ready has its Works
// released without reaching it, so an unreachable member can still leave.
// A Cluster not Ready but staying is still tried: its Ready may lag, and a
// failure is retried.
func deletionOf(cluster *clusterv1alpha1.Cluster, work *workv1alpha1.Work) onDeletion {
	switch {
	case cluster == nil, ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false):
		return leaveObjects
	case cluster.DeletionTimestamp.IsZero():
		return removeObjects
	case !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady):
		return leaveObjects
	default:
		return removeLeaving
	}
}

// leavingKeeps says whether an object stays in a member whose Cluster is
// being deleted, and why. An object with a deletion delay stays: its
// countdown could never be taken back, nor ended, once the member is gone,
// and deleting it at once would skip the delay its owner asked for; it
// stays as the hub left it, and is taken back if the cluster joins again.
// A namespace stays: it may hold what is kept and what is not the hub's.
func leavingKeeps(kind string, delayed bool) (string, bool) {
	switch {
	case delayed:
		return "kept: its deletion delay cannot run in a cluster that leaves", true
	case kind == "Namespace":
		return "kept: a namespace stays in a cluster that leaves", true
	}
	return "", false
}

// LeaveOutcome is what becomes of an object a Work placed in a member when
// the member's Cluster is deleted.
type LeaveOutcome string

// What deleting a Cluster does to the objects its Works placed there.
const (
	LeaveDeleted     LeaveOutcome = "deleted"
	LeavePreserved   LeaveOutcome = "preserved by their policy (preserveResourcesOnDeletion)"
	LeaveDelayed     LeaveOutcome = "with a deletion delay"
	LeaveNamespace   LeaveOutcome = "namespace(s) the hub propagated"
	LeaveUnreachable LeaveOutcome = "left as they are, the cluster not being Ready"
)

// OnLeave counts what deleting the Cluster of work, Ready or not, does to
// each object work placed in the member: the decisions the member's Work
// controller takes when the Work goes (deletionOf, leavingKeeps), for
// `federator unjoin` to say before it deletes. A manifest that cannot be
// read counts as deleted (its Work's deletion fails until it can be).
func OnLeave(ready bool, work *workv1alpha1.Work) map[LeaveOutcome]int {
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	now := metav1.Now()
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status}}}}
	out := map[LeaveOutcome]int{}
	how := deletionOf(cluster, work)
	for _, m := range work.Spec.Workload.Manifests {
		manifest, err := decodeManifest(m)
		switch {
		case how == leaveObjects && ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false):
			out[LeavePreserved]++
		case how == leaveObjects:
			out[LeaveUnreachable]++
		case err != nil:
			out[LeaveDeleted]++
		case manifest.GetKind() == "Namespace":
			out[LeaveNamespace]++
		default:
			if _, kept := leavingKeeps(manifest.GetKind(), countdown.Delayed(manifest)); kept {
				out[LeaveDelayed]++
			} else {
				out[LeaveDeleted]++
			}
		}
	}
	return out
}

// delete removes the Work's objects from the member, whatever holds the
// Work: deletion is never blocked by a suspension, only delayed by a
// deletion delay. Either way the Work is released at once, so neither it
// nor its binding waits for a countdown: the countdown is recorded in a
// tombstone of its own, and the Work can be written again if the object
// is placed here again. What the deletion does in the member is
// deletionOf's to say (a member that leaves, a Work that preserves).
func (r *WorkReconciler) delete(ctx context.Context, work *workv1alpha1.Work) (string, error) {
	if !controllerutil.ContainsFinalizer(work, workkeys.ExecutionFinalizer) {
		return "", nil
	}
	outcome := "released"
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Hub.Get(ctx, client.ObjectKey{Name: r.Cluster}, cluster); apierrors.IsNotFound(err) {
		cluster = nil
	} else if err != nil {
		return "", err
	}
	switch how := deletionOf(cluster, work); how {
	case leaveObjects:
		if cluster != nil && !cluster.DeletionTimestamp.IsZero() && !ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false) {
			outcome = "released: cluster " + r.Cluster + " leaves while not Ready, its objects stay"
		}
	default:
		member, err := r.Members.Client(ctx, r.Cluster)
		if err != nil {
			return "", err
		}
		for _, m := range work.Spec.Workload.Manifests {
			manifest, err := decodeManifest(m)
			if err != nil {
				return "", err
			}
			release, err := r.memberSlot(ctx)
			if err != nil {
				return "", err
			}
			did, err := r.removeManifest(ctx, member, manifest, work.Namespace, work.Name, how == removeLeaving)
			release()
			if err != nil {
				return "", fmt.Errorf("delete %s %s from cluster %s: %w", manifest.GetKind(), toolscache.MetaObjectToName(manifest).String(), r.Cluster, err)
			}
			if did != "" {
				outcome = fmt.Sprintf("%s %s: %s", manifest.GetKind(), toolscache.MetaObjectToName(manifest).String(), did)
			}
		}
	}
	return outcome, finalizers.Remove(ctx, r.Hub, work, workkeys.ExecutionFinalizer)
}
