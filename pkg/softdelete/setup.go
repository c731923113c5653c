package softdelete

import (
	"context"
	"encoding/json"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/pkg/metrics"
)

// Options tune the countdown controller.
type Options struct {
	// Members reaches each member cluster.
	Members MemberClients
	// MaxDelay caps every deletion delay (--max-deletion-delay).
	MaxDelay time.Duration
	// Clock is the real clock when nil.
	Clock clock.PassiveClock
	// Workers reconciling tombstones at once.
	Workers int
	// Frozen, when set, is asked before the hub deletes a Work it kept
	// for a countdown (Reconciler.Frozen).
	Frozen func(ctx context.Context, cluster string) error
	// Cluster, when set, is the one Pull cluster whose countdowns this
	// controller ends, from inside it (pkg/agent): only its execution
	// namespace's tombstones are read.
	Cluster string
}

// SetupWithManager registers the countdown controller. Tombstones are read
// from a cache of their own, limited by their label: the hub's other
// ConfigMaps (templates among them) are none of its business and are not
// cached for it.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	tombstones, err := countdown.NewCache(mgr, o.Cluster)
	if err != nil {
		return err
	}
	informer, err := tombstones.GetInformer(context.Background(), &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	if _, err := informer.AddEventHandler(pendingCounter{}); err != nil {
		return err
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	r := &Reconciler{Hub: mgr.GetClient(), HubReader: mgr.GetAPIReader(), Tombstones: tombstones, Members: o.Members, Clock: o.Clock, MaxDelay: o.MaxDelay,
		Pull: o.Cluster != "", Frozen: o.Frozen,
		Recorder: mgr.GetEventRecorderFor("softdelete-controller")}
	b := ctrl.NewControllerManagedBy(mgr).Named("softdelete").
		WatchesRawSource(source.Kind(tombstones, client.Object(&corev1.ConfigMap{}), &handler.EnqueueRequestForObject{})).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(tombstonesOf(tombstones)),
			builder.WithPredicates(clusterDeleted)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(o.Workers, 1)})
	if o.Cluster == "" {
		// The Works the hub keeps for countdowns (countdown.KeepWork): a
		// mark removed (placed again) or a Work gone ends one at once.
		b = b.Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(keptWorkTombstone), builder.WithPredicates(keptWork))
	}
	return b.Complete(r)
}

// keptWork passes the events of Works the hub keeps for countdowns, and
// of those it kept until now: marked before or after.
var keptWork = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return marked(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return marked(e.ObjectOld) || marked(e.ObjectNew) },
	DeleteFunc:  func(e event.DeleteEvent) bool { return marked(e.Object) },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func marked(o client.Object) bool {
	_, ok := o.GetAnnotations()[workkeys.DeletionTimestampAnnotation]
	return ok
}

// keptWorkTombstone maps a kept Work to the tombstone of its object.
func keptWorkTombstone(_ context.Context, o client.Object) []reconcile.Request {
	work, ok := o.(*workv1alpha1.Work)
	if !ok || len(work.Spec.Workload.Manifests) != 1 {
		return nil
	}
	m := &metav1.PartialObjectMetadata{}
	if err := json.Unmarshal(work.Spec.Workload.Manifests[0].Raw, m); err != nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: work.Namespace,
		Name: countdown.TombstoneName(m.Kind, m.Namespace, m.Name)}}}
}

// tombstonesOf maps a Cluster to the tombstones of its members' objects.
func tombstonesOf(tombstones client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		list := &corev1.ConfigMapList{}
		if err := tombstones.List(ctx, list, client.InNamespace(names.GenerateExecutionSpaceName(o.GetName()))); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
}

// clusterDeleted passes only a Cluster's deletion: a member that leaves
// ends its countdowns (even one that never ends by itself).
var clusterDeleted = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// pendingCounter keeps federator_soft_deletions_pending from the tombstone
// informer: one per tombstone, by the cluster of its execution namespace.
type pendingCounter struct{}

func (pendingCounter) OnAdd(obj any, _ bool) { pendingCounter{}.shift(obj, 1) }
func (pendingCounter) OnUpdate(_, _ any)     {}
func (pendingCounter) OnDelete(obj any)      { pendingCounter{}.shift(obj, -1) }

func (pendingCounter) shift(obj any, by float64) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	if cluster, err := names.GetClusterName(o.GetNamespace()); err == nil {
		metrics.SoftDeletionsPending.WithLabelValues(cluster).Add(by)
	}
}
