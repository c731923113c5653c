package dispatch

import (
	"context"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// setupMember starts the Work controller of one member: its own queue,
// workers and retry backoff, watching only that member's execution
// namespace. It may be called after the manager has started.
func setupMember(mgr ctrl.Manager, members *Members, cluster string) (*memberWatch, error) {
	ns := names.GenerateExecutionSpaceName(cluster)
	watch := &memberWatch{mgr: mgr, members: members, cluster: cluster, watched: map[schema.GroupVersionKind]bool{}}
	r := &WorkReconciler{Hub: mgr.GetClient(), Members: members, Cluster: cluster, watch: watch,
		Recorder: mgr.GetEventRecorderFor("execution-controller")}
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns })
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("dispatch-"+cluster).
		For(&workv1alpha1.Work{}, builder.WithPredicates(inNamespace, predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, deletionStarted{}))).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(worksOf(mgr.GetClient(), ns)),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == cluster }),
				readyChanged{})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 4,
			// A member that comes back is caught up within seconds, not
			// after client-go's exponential backoff has grown to minutes.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](200*time.Millisecond, 10*time.Second),
		}).
		Build(r)
	if err != nil {
		return nil, err
	}
	watch.setController(c)
	return watch, nil
}

func worksOf(hub client.Client, ns string) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		works := &workv1alpha1.WorkList{}
		if err := hub.List(ctx, works, client.InNamespace(ns)); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(works.Items))
		for _, w := range works.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&w)})
		}
		return reqs
	}
}

// deletionStarted passes the update that sets a deletionTimestamp.
type deletionStarted struct{ predicate.Funcs }

func (deletionStarted) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}

// readyChanged passes a Cluster update whose Ready condition changed, so a
// member that comes back gets its Works at once.
type readyChanged struct{ predicate.Funcs }

func (readyChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
	n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
	if !ok1 || !ok2 {
		return false
	}
	return meta.IsStatusConditionTrue(o.Status.Conditions, clusterv1alpha1.ClusterConditionReady) !=
		meta.IsStatusConditionTrue(n.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}
