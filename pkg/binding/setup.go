package binding

import (
	"context"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Setup registers the ResourceBinding and ClusterResourceBinding
// controllers. A binding is reconciled when it changes, when one of its
// Works changes (status flows back), and when Clusters come, go or are
// relabelled (placement may change).
func Setup(mgr ctrl.Manager, workers int) error {
	for _, clusterScoped := range []bool{false, true} {
		r := &Reconciler{Client: mgr.GetClient(), ClusterScoped: clusterScoped,
			Recorder: mgr.GetEventRecorderFor("binding-controller")}
		var obj client.Object = &workv1alpha2.ResourceBinding{}
		name := "resourcebinding"
		if clusterScoped {
			obj, name = &workv1alpha2.ClusterResourceBinding{}, "clusterresourcebinding"
		}
		err := ctrl.NewControllerManagedBy(mgr).
			Named(name).
			For(obj).
			Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(bindingOfWork(clusterScoped)),
				builder.WithPredicates(workStatusChanged{})).
			Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(allBindings(mgr.GetClient(), clusterScoped)),
				builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
			WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
			Complete(r)
		if err != nil {
			return err
		}
	}
	return nil
}

func bindingOfWork(clusterScoped bool) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		a := o.GetAnnotations()
		if clusterScoped {
			if name := a[workv1alpha2.ClusterResourceBindingAnnotationKey]; name != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
			}
			return nil
		}
		if name := a[workv1alpha2.ResourceBindingNameAnnotationKey]; name != "" {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{
				Namespace: a[workv1alpha2.ResourceBindingNamespaceAnnotationKey], Name: name}}}
		}
		return nil
	}
}

func allBindings(c client.Client, clusterScoped bool) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		if clusterScoped {
			list := &workv1alpha2.ClusterResourceBindingList{}
			if err := c.List(ctx, list); err != nil {
				return nil
			}
			for i := range list.Items {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
			return reqs
		}
		list := &workv1alpha2.ResourceBindingList{}
		if err := c.List(ctx, list); err != nil {
			return nil
		}
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
}

// workStatusChanged passes what a binding must react to from its Works: a
// new status to aggregate, and a Work deleted by someone else. The binding's
// own creates and spec updates are not news to it.
type workStatusChanged struct{ predicate.Funcs }

func (workStatusChanged) Create(event.CreateEvent) bool { return false }

func (workStatusChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*workv1alpha1.Work)
	n, ok2 := e.ObjectNew.(*workv1alpha1.Work)
	return !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.Status, n.Status)
}
