package rollout

import (
	"context"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/batch"
	"github.com/federator-dev/federator/internal/revision"
)

// Options tune the rollout controllers.
type Options struct {
	Workers int
}

// SetupWithManager registers the controllers of Rollouts and
// ClusterRollouts. A rollout steps when it changes, when a binding of its
// policy changes (a new content is stamped, placement moves), when one of
// their Works changes (new content held, applied, healthy), when a Gate or
// a Cluster changes (stage gates; stages by label), and when a soak or a
// deadline ends (RequeueAfter).
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	c := mgr.GetClient()
	for _, clusterScoped := range []bool{false, true} {
		var obj client.Object = &rolloutsv1alpha1.Rollout{}
		name := "rollout"
		if clusterScoped {
			obj, name = &rolloutsv1alpha1.ClusterRollout{}, "clusterrollout"
		}
		err := ctrl.NewControllerManagedBy(mgr).
			Named(name).
			For(obj, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{},
				predicate.AnnotationChangedPredicate{}))).
			Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(rolloutsOfBinding(c, clusterScoped))).
			Watches(&workv1alpha2.ClusterResourceBinding{}, handler.EnqueueRequestsFromMapFunc(rolloutsOfBinding(c, clusterScoped))).
			Watches(&workv1alpha1.Work{}, batch.Handler(rolloutsOfWork(c, clusterScoped), workBatch)).
			Watches(&gatingv1alpha1.Gate{}, handler.EnqueueRequestsFromMapFunc(allRollouts(c, clusterScoped))).
			// An override that applies changes what clusters get: a new
			// revision where it does.
			Watches(&policyv1alpha1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(allRollouts(c, clusterScoped)),
				builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(allRollouts(c, clusterScoped)),
				builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(allRollouts(c, clusterScoped)),
				builder.WithPredicates(predicate.Or[client.Object](predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
			WithOptions(controller.Options{MaxConcurrentReconciles: max(o.Workers, 1)}).
			Complete(&Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor("rollout-controller"), ClusterScoped: clusterScoped})
		if err != nil {
			return err
		}
	}
	return nil
}

// workBatch gathers the status reports of a rollout's Works into one step.
const workBatch = 200 * time.Millisecond

func allRollouts(c client.Reader, clusterScoped bool) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		if clusterScoped {
			list := &rolloutsv1alpha1.ClusterRolloutList{}
			if err := c.List(ctx, list); err != nil {
				return nil
			}
			for i := range list.Items {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
			return reqs
		}
		list := &rolloutsv1alpha1.RolloutList{}
		if err := c.List(ctx, list); err != nil {
			return nil
		}
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
}

// rolloutsOfBinding maps a binding to the rollout of its policy.
func rolloutsOfBinding(c client.Reader, clusterScoped bool) handler.MapFunc {
	return func(ctx context.Context, b client.Object) []reconcile.Request {
		kind, ns, name := workkeys.ClaimingPolicy(b.GetAnnotations())
		if name == "" || (kind == workkeys.ClusterPropagationPolicyKind) != clusterScoped {
			return nil
		}
		ro, ok, err := revision.Governing(ctx, c, kind, ns, name)
		if err != nil || !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(ro.Obj)}}
	}
}

// rolloutsOfWork maps a Work to the rollout of its binding's policy.
func rolloutsOfWork(c client.Reader, clusterScoped bool) handler.MapFunc {
	ofBinding := rolloutsOfBinding(c, clusterScoped)
	return func(ctx context.Context, w client.Object) []reconcile.Request {
		a := w.GetAnnotations()
		var b client.Object
		var key client.ObjectKey
		if name := a[workv1alpha2.ClusterResourceBindingAnnotationKey]; name != "" {
			b, key = &workv1alpha2.ClusterResourceBinding{}, client.ObjectKey{Name: name}
		} else if name := a[workv1alpha2.ResourceBindingNameAnnotationKey]; name != "" {
			b, key = &workv1alpha2.ResourceBinding{}, client.ObjectKey{Namespace: a[workv1alpha2.ResourceBindingNamespaceAnnotationKey], Name: name}
		} else {
			return nil
		}
		if err := c.Get(ctx, key, b); err != nil {
			return nil
		}
		return ofBinding(ctx, b)
	}
}
