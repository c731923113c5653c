package binding

import (
	"context"
	"fmt"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/batch"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/holdqueue"
	"github.com/federator-dev/federator/internal/redecide"
	"github.com/federator-dev/federator/pkg/hold"
	"github.com/federator-dev/federator/pkg/metrics"
)

// Options tune the binding controller.
type Options struct {
	// Workers per controller.
	Workers int
	// MaxDeletionDelay caps federator.dev/deletion-delay (0: no cap).
	MaxDeletionDelay time.Duration
	// FirstPass, when set, is told of every binding reconciled and of the
	// bindings present when this replica began to lead: the dispatcher
	// waits for it (internal/redecide).
	FirstPass *redecide.FirstPass
	// Deciders, when set, is told what hold changes the controller is
	// deciding (holdqueue.Watched's Deciding), by binding key: the
	// dispatchers write no release of a binding while one is.
	Deciders *holdqueue.Deciders
	// CatchUp, when set, asks for bindings to be decided again after the
	// hub caches broke, and is told of every binding decided
	// (internal/redecide).
	CatchUp *redecide.Round
}

// PolicyIndex indexes bindings by the policy that claims their template:
// "PropagationPolicy/<namespace>/<name>" or "ClusterPropagationPolicy/<name>".
const PolicyIndex = "binding.federator.dev/policy"

// FirstPassPatience is how long the dispatchers wait, after a replica
// begins to lead, for bindings that cannot be decided (their passes keep
// failing) before they dispatch anyway.
var FirstPassPatience = time.Minute

// SetupWithManager registers, for ResourceBindings and
// ClusterResourceBindings, the controller that writes Works.
//
// Works are rewritten when the binding changes, when one of its Works is
// deleted by someone else, when Clusters come, go, are relabelled or serve
// other APIs (placement may change) or list other gates, when an annotation of the
// claiming policy changes (the suspended annotation holds without changing
// the policy's generation, so the detector does not rewrite the binding for
// it), when a gate it waits for opens, closes, appears or goes, or its spec
// or requests change (gates are judged by the clock, gates.go), and when an
// override policy that may select its template comes, changes or goes, and
// when a Rollout that governs its policy comes, goes or releases clusters.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	if err := bindingview.IndexWorks(mgr); err != nil {
		return err
	}
	if o.FirstPass != nil {
		// On the leader only (a runnable is leader-elected unless it says
		// otherwise): the bindings present once the caches have synced.
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			if !mgr.GetCache().WaitForCacheSync(ctx) {
				return nil
			}
			var keys []string
			for _, clusterScoped := range []bool{false, true} {
				list := bindingList(clusterScoped)
				if err := mgr.GetClient().List(ctx, list); err != nil {
					return fmt.Errorf("listing the bindings the dispatcher waits for: %w", err)
				}
				for _, b := range items(list) {
					keys = append(keys, keyOf(client.ObjectKeyFromObject(b)))
				}
			}
			o.FirstPass.Listed(keys)
			select {
			case <-o.FirstPass.Done():
			case <-ctx.Done():
			case <-time.After(FirstPassPatience):
				if pending := o.FirstPass.GiveUp(); len(pending) > 0 {
					mgr.GetLogger().Info("dispatching starts although these bindings could not be decided since this replica began to lead; "+
						"their Works may carry what the previous leader last wrote until they are (each binding's WorksSynced condition says why)",
						"waited", FirstPassPatience.String(), "bindings", pending)
				}
			}
			return nil
		})); err != nil {
			return err
		}
	}
	for _, clusterScoped := range []bool{false, true} {
		view := bindingview.New(clusterScoped)
		obj, name := view.Obj, view.ControllerName("")
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, PolicyIndex, func(o client.Object) []string {
			b := bindingview.View{Obj: o, ClusterScoped: clusterScoped}
			if kind, ns, name := b.PolicyRef(); kind != "" {
				return []string{policyIndexValue(kind, ns, name)}
			}
			return nil
		}); err != nil {
			return err
		}
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, ResourceKindIndex, resourceKind); err != nil {
			return err
		}
		queue := holdqueue.NewWatched[reconcile.Request]()
		queue.Observe, queue.Workers = metrics.ObserveHoldQueueWait, o.Workers
		o.Deciders.Register("binding", func(key string) bool {
			return queue.Deciding(func(req reconcile.Request) bool { return keyOf(req.NamespacedName) == key })
		})
		waiters := &gateWaiters{}
		r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterScoped: clusterScoped, MaxDeletionDelay: o.MaxDeletionDelay,
			FirstPass: o.FirstPass, CatchUp: o.CatchUp, queue: queue, waiters: waiters,
			Recorder: mgr.GetEventRecorderFor("binding-controller")}
		b := ctrl.NewControllerManagedBy(mgr).Named(name)
		if o.CatchUp != nil {
			// After a break in the hub caches' watches, every binding is
			// decided again once its template has been (internal/redecide).
			b = b.WatchesRawSource(source.TypedChannel(o.CatchUp.Bindings(clusterScoped), handler.TypedFuncs[types.NamespacedName, reconcile.Request]{
				GenericFunc: func(_ context.Context, e event.TypedGenericEvent[types.NamespacedName], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					q.Add(reconcile.Request{NamespacedName: e.Object})
				}}))
		}
		err := b.
			For(obj, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{},
				predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}), predicate.Not(holdsChanged))).
			// A binding whose holds change (its spec.suspension, its
			// template's hold annotations) goes before bulk work.
			Watches(obj, holdqueue.Handler(self, nil), builder.WithPredicates(holdsChanged)).
			Watches(&workv1alpha1.Work{}, batch.Handler(bindingview.OfWork(clusterScoped), workBatch),
				builder.WithPredicates(workIntentChanged{})).
			Watches(&clusterv1alpha1.Cluster{}, bindingsAffectedByCluster(mgr.GetClient(), clusterScoped),
				builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
					predicate.AnnotationChangedPredicate{}, apiEnablementsChanged{}))).
			Watches(&gatingv1alpha1.Gate{}, holdqueue.Handler(bindingsWaitingFor(mgr.GetClient(), clusterScoped, waiters), nil),
				builder.WithPredicates(predicate.Or[client.Object](gateOpenedChanged{},
					predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
			Watches(&policyv1alpha1.PropagationPolicy{}, holdqueue.Handler(bindingsOfPolicy(mgr.GetClient(), clusterScoped, "PropagationPolicy"), annotationHoldsChanged),
				builder.WithPredicates(predicate.AnnotationChangedPredicate{})).
			Watches(&policyv1alpha1.ClusterPropagationPolicy{}, holdqueue.Handler(bindingsOfPolicy(mgr.GetClient(), clusterScoped, "ClusterPropagationPolicy"), annotationHoldsChanged),
				builder.WithPredicates(predicate.AnnotationChangedPredicate{})).
			Watches(&rolloutsv1alpha1.Rollout{}, holdqueue.Handler(bindingsOfRollout(mgr.GetClient(), clusterScoped, "PropagationPolicy"), nil)).
			Watches(&rolloutsv1alpha1.ClusterRollout{}, holdqueue.Handler(bindingsOfRollout(mgr.GetClient(), clusterScoped, "ClusterPropagationPolicy"), nil)).
			// A freeze is recorded in every Work it holds, in the bulk
			// lane: the dispatchers honour it without waiting for that.
			Watches(&gatingv1alpha1.Freeze{}, handler.EnqueueRequestsFromMapFunc(allBindings(mgr.GetClient(), clusterScoped))).
			Watches(&policyv1alpha1.OverridePolicy{}, bindingsOverriddenBy(mgr.GetClient(), clusterScoped)).
			Watches(&policyv1alpha1.ClusterOverridePolicy{}, bindingsOverriddenBy(mgr.GetClient(), clusterScoped)).
			WithOptions(controller.Options{MaxConcurrentReconciles: o.Workers, UsePriorityQueue: ptr.To(true), NewQueue: queue.NewQueue}).
			Complete(r)
		if err != nil {
			return err
		}
	}
	return nil
}

// keyOf names a binding for internal/redecide's first pass and round
// alike (a ClusterResourceBinding's key has no namespace).
func keyOf(key client.ObjectKey) string {
	return redecide.BindingKey(key.Namespace, key.Name)
}

// self maps a binding to its own request.
func self(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
}

// holdsChanged passes a binding update that changes what holds it: its
// spec.suspension, or the digest of its template's hold annotations the
// detector stamps (workkeys.TemplateHoldsAnnotation).
var holdsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld.GetAnnotations()[workkeys.TemplateHoldsAnnotation] != e.ObjectNew.GetAnnotations()[workkeys.TemplateHoldsAnnotation] {
			return true
		}
		o, n := bindingview.Of(e.ObjectOld), bindingview.Of(e.ObjectNew)
		return o.Spec != nil && n.Spec != nil && !equality.Semantic.DeepEqual(o.Spec.Suspension, n.Spec.Suspension)
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// annotationHoldsChanged says whether a policy update changes an annotation
// that holds (the suspended ones, gates, deletion delay).
func annotationHoldsChanged(old, new client.Object) bool {
	return hold.AnnotationsChanged(old.GetAnnotations(), new.GetAnnotations())
}

func policyIndexValue(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}
