package dispatch

import (
	"context"
	"sync"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// clusterReconciler gives every registered Cluster its execution namespace
// (karmada-es-<cluster>) and its own Work controller.
// When a Cluster is deleted, the member's watches stop and its client is
// dropped; its Work controller stays, idle, to finish the Works still
// being deleted and to serve the member again if it rejoins.
type clusterReconciler struct {
	mgr     ctrl.Manager
	members *Members

	mu      sync.Mutex
	started map[string]*memberWatch
}

func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.mgr.GetClient().Get(ctx, req.NamespacedName, cluster); apierrors.IsNotFound(err) {
		r.left(req.Name)
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.GenerateExecutionSpaceName(cluster.Name)}}
	if err := r.mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ns), ns); apierrors.IsNotFound(err) {
		if err := r.mgr.GetClient().Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, err
		}
	} else if err != nil {
		return ctrl.Result{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started[cluster.Name] != nil {
		return ctrl.Result{}, nil
	}
	watch, err := setupMember(r.mgr, r.members, cluster.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.started[cluster.Name] = watch
	return ctrl.Result{}, nil
}

// left stops watching a member whose Cluster is gone.
func (r *clusterReconciler) left(cluster string) {
	r.mu.Lock()
	watch := r.started[cluster]
	r.mu.Unlock()
	if watch != nil {
		watch.stop()
	}
	r.members.Forget(cluster)
}

// Setup registers the dispatcher: one Work controller per member Cluster,
// started as Clusters appear.
func Setup(mgr ctrl.Manager, members *Members) error {
	r := &clusterReconciler{mgr: mgr, members: members, started: map[string]*memberWatch{}}
	return ctrl.NewControllerManagedBy(mgr).Named("dispatch-clusters").
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}
