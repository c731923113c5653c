package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterkeys "github.com/federator-dev/federator/apis/cluster"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/finalizers"
	"github.com/federator-dev/federator/internal/leaving"
	"github.com/federator-dev/federator/pkg/membership"
)

// leavingRecheck is how soon a leaving Cluster is looked at again while a
// binding still targets it (the Work watch brings it back sooner when a
// Work goes).
const leavingRecheck = 2 * time.Second

// ensureFinalizer puts the cluster finalizer on a Cluster, as Karmada's
// cluster controller does, so that deleting it waits for the hub to let go
// of the member (finishLeaving).
func (r *clusterReconciler) ensureFinalizer(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	return finalizers.Add(ctx, r.hub, cluster, clusterkeys.ControllerFinalizer)
}

// finishLeaving lets go of a Cluster being deleted, as Karmada's cluster
// controller does (removeCluster): it deletes every Work in the cluster's
// execution namespace (the member's Work controller, still running, removes
// their objects from the member as leaving.DeletionOf says), waits until none is
// left and no binding targets the cluster, then removes the finalizer. The
// execution namespace itself stays, unlike Karmada's: on a hub without a
// namespace controller its deletion never ends, and a cluster joining again
// under the same name could get no Work until it did.
func (r *clusterReconciler) finishLeaving(ctx context.Context, cluster *clusterv1alpha1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cluster, clusterkeys.ControllerFinalizer) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	works := &workv1alpha1.WorkList{}
	if err := r.hub.List(ctx, works, client.InNamespace(names.GenerateExecutionSpaceName(cluster.Name))); err != nil {
		return ctrl.Result{}, err
	}
	// A Pull cluster is served by its agent; one whose Ready is not True
	// has no agent reporting, and none would let go of its Works: the hub
	// does, touching nothing in the member, as for any cluster that leaves
	// while not Ready (leaving.DeletionOf).
	unserved := membership.Pull(cluster) && !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	var errs []error
	for i := range works.Items {
		w := &works.Items[i]
		if !w.DeletionTimestamp.IsZero() {
			if unserved && controllerutil.ContainsFinalizer(w, workkeys.ExecutionFinalizer) {
				if err := finalizers.Remove(ctx, r.hub, w, workkeys.ExecutionFinalizer); err != nil {
					errs = append(errs, fmt.Errorf("releasing Work %s/%s of Pull cluster %s, which leaves with no agent reporting: %w",
						w.Namespace, w.Name, cluster.Name, err))
				}
			}
			continue
		}
		if err := r.hub.Delete(ctx, w, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting Work %s/%s of cluster %s, which leaves: %w", w.Namespace, w.Name, cluster.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if len(works.Items) > 0 {
		// Each Work's deletion brings the Cluster back here (workGone).
		log.V(1).Info(fmt.Sprintf("leaving: waiting for %d Works to be deleted", len(works.Items)), "cluster", cluster.Name)
		return ctrl.Result{RequeueAfter: leavingRecheck}, nil
	}
	targeting, err := leaving.BindingsTargeting(ctx, r.hub, cluster.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(targeting) > 0 {
		log.V(1).Info("leaving: waiting for bindings to stop targeting it", "cluster", cluster.Name, "bindings", targeting)
		return ctrl.Result{RequeueAfter: leavingRecheck}, nil
	}
	if err := finalizers.Remove(ctx, r.hub, cluster, clusterkeys.ControllerFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	log.V(1).Info("left: no Work and no binding holds it any more, finalizer removed", "cluster", cluster.Name)
	return ctrl.Result{}, nil
}

// leavingClusterOfWork maps a Work that is gone to its Cluster when that
// Cluster is being deleted: the Work may have been the last it waited for.
func (r *clusterReconciler) leavingClusterOfWork(ctx context.Context, o client.Object) []reconcile.Request {
	name, err := names.GetClusterName(o.GetNamespace())
	if err != nil {
		return nil
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.hub.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil || cluster.DeletionTimestamp.IsZero() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
}

// workGone passes the deletion of a Work from the hub.
var workGone = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}
