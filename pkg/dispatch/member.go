package dispatch

import (
	"context"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

// member is the Work controller and the watch of one member cluster, from
// its joining the federation until it leaves.
type member struct {
	watch  *memberWatch
	cancel context.CancelFunc
	done   <-chan struct{} // closed once the controller has stopped
}

// startMember starts the Work controller of one member under ctx. The
// controller is not the manager's: the member's stop ends it for good.
func startMember(ctx context.Context, mgr ctrl.Manager, members *Members, cluster string, g gates) (*member, error) {
	ctx, cancel := context.WithCancel(ctx)
	watch := newMemberWatch(ctx, members, cluster)
	c, err := newMemberController(ctx, mgr, members, cluster, watch, g)
	if err != nil {
		cancel()
		return nil, err
	}
	watch.controller = c
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Start(ctx); err != nil {
			mgr.GetLogger().Error(err, "member Work controller stopped", "cluster", cluster)
		}
	}()
	return &member{watch: watch, cancel: cancel, done: done}, nil
}

// MemberWrites is how many writes one member is sent at once. A member's
// workers number more: a reconcile spends as long again writing the Work's
// status to the hub, and that round trip should not keep the next Work
// from its member.
const MemberWrites = 4

// memberWorkers are the Work reconciles of one member at once.
const memberWorkers = 4 * MemberWrites

// newMemberController builds the Work controller of one member: its own
// queue, workers and retry backoff, watching only that member's execution
// namespace and its Cluster.
func newMemberController(ctx context.Context, mgr ctrl.Manager, members *Members, cluster string, watch *memberWatch,
	g gates) (controller.Controller, error) {
	r := &WorkReconciler{Hub: mgr.GetClient(), HubReader: mgr.GetAPIReader(), Members: members, Cluster: cluster, watch: watch,
		FirstPass: g.firstPass, HubCaches: g.hubCaches, Holds: g.holds,
		Recorder: mgr.GetEventRecorderFor("execution-controller"), memberWrites: make(chan struct{}, MemberWrites)}
	options := controller.Options{
		Reconciler:              r,
		Logger:                  mgr.GetLogger(),
		MaxConcurrentReconciles: memberWorkers,
		// A member that comes back is caught up within seconds, not
		// after client-go's exponential backoff has grown to minutes.
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](200*time.Millisecond, 10*time.Second),
		// A member that rejoins gets a new controller under its old name.
		SkipNameValidation: ptr.To(true),
	}
	options.DefaultFromConfig(mgr.GetControllerOptions())
	c, err := controller.NewUnmanaged("dispatch-"+cluster, options)
	if err != nil {
		return nil, err
	}
	works, err := mgr.GetCache().GetInformer(ctx, &workv1alpha1.Work{})
	if err != nil {
		return nil, err
	}
	clusters, err := mgr.GetCache().GetInformer(ctx, &clusterv1alpha1.Cluster{})
	if err != nil {
		return nil, err
	}
	freezes, err := mgr.GetCache().GetInformer(ctx, &gatingv1alpha1.Freeze{})
	if err != nil {
		return nil, err
	}
	ns := names.GenerateExecutionSpaceName(cluster)
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns })
	named := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == cluster })
	for _, src := range []source.Source{
		sharedSource(works, &handler.EnqueueRequestForObject{}, inNamespace,
			predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, deletionStarted{})),
		sharedSource(clusters, handler.EnqueueRequestsFromMapFunc(requestsForWorksIn(mgr.GetClient(), ns)), named, becameReady{}),
		// A freeze costs nothing until a write meets it; what it kept
		// from the member is queued again when the Freezes change.
		sharedSource(freezes, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return r.frozenRequests()
		})),
	} {
		if err := c.Watch(src); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// stop ends the member's watch, then its controller, and returns once
// neither runs: reconciles in flight have returned and none restarts the
// watch.
func (m *member) stop() {
	m.watch.stop()
	m.cancel()
	<-m.done
}

// sharedSource feeds a member's controller from one of the manager's
// informers, and takes its event handler off the informer when the
// controller stops. controller-runtime's Kind source would leave it
// registered, with its goroutines, for as long as the informer runs: one
// more for every member that ever joined.
func sharedSource(informer cache.Informer, h handler.EventHandler, predicates ...predicate.Predicate) source.Source {
	return source.Func(func(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		src := &source.Informer{Informer: detachOnDone{Informer: informer, ctx: ctx}, Handler: h, Predicates: predicates}
		return src.Start(ctx, queue)
	})
}

// detachOnDone removes every handler added through it once ctx is done.
type detachOnDone struct {
	cache.Informer
	ctx context.Context
}

func (d detachOnDone) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	registration, err := d.Informer.AddEventHandlerWithOptions(h, o)
	if err != nil {
		return nil, err
	}
	go func() {
		<-d.ctx.Done()
		_ = d.Informer.RemoveEventHandler(registration)
	}()
	return registration, nil
}

// requestsForWorksIn maps any event to a reconcile of every Work in ns (a
// member's execution namespace): what a change of the Cluster or its
// credentials affects. (internal/bindingview's WorksOf lists one binding's Works.)
func requestsForWorksIn(hub client.Client, ns string) handler.MapFunc {
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

// becameReady passes a Cluster update whose Ready condition turned True,
// so a member that comes back gets its Works at once. It compares whether
// Ready is True, not the condition itself (conditions.Changed): absent,
// False and Unknown all mean not ready. A member that stops being ready
// requeues nothing: each of its Works would hold a worker until the member
// request timeout (32 s) ran out, and the Work that changes meanwhile
// would wait behind all of them (measured on kind, with a paused member:
// more than 100 s before its Work said AppliedFailed). A Work that changes
// is queued by its own change; its status keeps what the member last ran.
type becameReady struct{ predicate.Funcs }

func (becameReady) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
	n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
	if !ok1 || !ok2 {
		return false
	}
	return !meta.IsStatusConditionTrue(o.Status.Conditions, clusterv1alpha1.ClusterConditionReady) &&
		meta.IsStatusConditionTrue(n.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}
