package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/finalizers"
	"github.com/federator-dev/federator/pkg/membership"
)

// clusterReconciler gives every registered Cluster its execution namespace
// (karmada-es-<cluster>), its finalizer and its own Work controller and
// watch. A Cluster being deleted keeps its Work controller, which deletes
// the member's objects as their Works go (finishLeaving); once the hub has
// let go of it the finalizer goes, and with the Cluster its controller and
// watch. It is also a manager runnable: member controllers run under the
// manager's context and are stopped, and waited for, when the manager stops.
type clusterReconciler struct {
	mgr     ctrl.Manager
	hub     client.Client
	members *Members
	// gates: what each member's Work controller waits on (Options).
	gates gates

	started chan struct{} // closed once ctx is set

	mu      sync.Mutex
	ctx     context.Context // the manager's
	running map[string]*member
	// setUp holds the Clusters whose member client and Work controller
	// were set up once, or tried and failed (the failure is retried and
	// reported on the Cluster): what /readyz waits for.
	setUp map[string]bool
}

// Start holds the manager's context for the member controllers, and stops
// them all when it ends.
func (r *clusterReconciler) Start(ctx context.Context) error {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	close(r.started)
	<-ctx.Done()
	r.mu.Lock()
	running := r.running
	r.running = map[string]*member{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range running {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.stop()
		}()
	}
	wg.Wait()
	return nil
}

func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.hub.Get(ctx, req.NamespacedName, cluster); apierrors.IsNotFound(err) {
		return ctrl.Result{}, r.left(ctx, req.Name)
	} else if err != nil {
		return ctrl.Result{}, err
	}
	pull := membership.Pull(cluster)
	if pull {
		// Its agent applies its Works (pkg/agent): the hub runs no
		// controller of it, and stops the one it ran if the Cluster has
		// just turned to Pull mode.
		r.part(cluster.Name)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		// The member's controller runs until the finalizer goes (after a
		// restart too): it deletes the objects of the Works going now;
		// a Pull cluster's agent does that.
		var err error
		if !pull {
			err = r.join(ctx, cluster.Name)
		}
		r.settled(cluster.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		return r.finishLeaving(ctx, cluster)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.GenerateExecutionSpaceName(cluster.Name)}}
	if err := r.hub.Get(ctx, client.ObjectKeyFromObject(ns), ns); apierrors.IsNotFound(err) {
		if err := r.hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, err
		}
	} else if err != nil {
		return ctrl.Result{}, err
	}
	var err error
	if !pull {
		err = r.join(ctx, cluster.Name)
	}
	r.settled(cluster.Name)
	// After the member is served: a hub whose RBAC predates the finalizer
	// (no patch on clusters) still dispatches, and says what it lacks.
	return ctrl.Result{}, errors.Join(err, r.ensureFinalizer(ctx, cluster))
}

// settled records that cluster's member client and Work controller were
// set up once, or tried (membersSetUp).
func (r *clusterReconciler) settled(cluster string) {
	r.mu.Lock()
	r.setUp[cluster] = true
	r.mu.Unlock()
}

// membersSetUp is the /readyz check of the member clients: it fails while a
// registered Cluster has not had its member client and Work controller set
// up (or tried) once. A replica that does not lead runs no member
// controllers, and has none to wait for.
func (r *clusterReconciler) membersSetUp(c client.Reader) func(*http.Request) error {
	return func(req *http.Request) error {
		select {
		case <-r.started:
		default:
			return nil
		}
		clusters := &clusterv1alpha1.ClusterList{}
		if err := c.List(req.Context(), clusters); err != nil {
			return err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		var waiting []string
		for _, cl := range clusters.Items {
			if !r.setUp[cl.Name] {
				waiting = append(waiting, cl.Name)
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("the member clients of %s are not set up yet", strings.Join(waiting, ", "))
		}
		return nil
	}
}

// join starts the member's Work controller unless it runs.
func (r *clusterReconciler) join(ctx context.Context, cluster string) error {
	select {
	case <-r.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[cluster] != nil || r.ctx.Err() != nil {
		return nil
	}
	m, err := startMember(r.ctx, r.mgr, r.members, cluster, r.gates)
	if err != nil {
		return fmt.Errorf("cluster %s: starting its Work controller: %w", cluster, err)
	}
	r.running[cluster] = m
	return nil
}

// part stops the Work controller and watch of a member the hub no longer
// dispatches to (its Cluster turned to Pull mode), and forgets its client.
func (r *clusterReconciler) part(cluster string) {
	r.mu.Lock()
	m := r.running[cluster]
	delete(r.running, cluster)
	r.mu.Unlock()
	if m != nil {
		m.stop()
	}
	r.members.Forget(cluster)
}

// left stops the Work controller and watch of a member whose Cluster is
// gone, forgets its client, and lets go of its Works being deleted.
//
// With the finalizer, a Cluster goes only once its execution namespace
// holds no Work; a Work may still be found there when the Cluster went
// without it (deleted before the finalizer was added, or the finalizer
// removed by hand). Those Works carry the finalizer that has their objects
// removed from the member, and once the member's controller is stopped
// nothing else would remove it: their deletion would hang for good, and so
// would that of their binding or namespace. Letting go is safe because the
// member cannot be reached any more (its Cluster, with the endpoint and
// credentials, is gone), which is what the Work reconciler's own deletion
// concludes too. It runs only after the controller has stopped, so no
// reconcile adds the finalizer back; a Work whose deletion starts later
// comes back here through the Work watch (clusterOfDeletedWork). Works not
// being deleted keep their finalizer, and are served again if the member
// rejoins.
func (r *clusterReconciler) left(ctx context.Context, cluster string) error {
	r.part(cluster)
	r.mu.Lock()
	delete(r.setUp, cluster)
	r.mu.Unlock()

	works := &workv1alpha1.WorkList{}
	if err := r.hub.List(ctx, works, client.InNamespace(names.GenerateExecutionSpaceName(cluster))); err != nil {
		return err
	}
	var errs []error
	for i := range works.Items {
		work := &works.Items[i]
		if work.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(work, workkeys.ExecutionFinalizer) {
			continue
		}
		if err := finalizers.Remove(ctx, r.hub, work, workkeys.ExecutionFinalizer); err != nil {
			errs = append(errs, fmt.Errorf("releasing Work %s/%s of cluster %s, which left the federation: %w",
				work.Namespace, work.Name, cluster, err))
		}
	}
	return errors.Join(errs...)
}

// clusterOfDeletedWork maps a Work whose deletion waits for its finalizer
// to its Cluster, unless that member's controller runs (and deletes it).
func (r *clusterReconciler) clusterOfDeletedWork(_ context.Context, o client.Object) []reconcile.Request {
	cluster, err := names.GetClusterName(o.GetNamespace())
	if err != nil {
		return nil
	}
	r.mu.Lock()
	_, served := r.running[cluster]
	r.mu.Unlock()
	if served {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: cluster}}}
}

// awaitingFinalizer passes Works being deleted that still carry the
// execution finalizer.
var awaitingFinalizer = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return awaitsFinalizer(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return awaitsFinalizer(e.ObjectNew) },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func awaitsFinalizer(o client.Object) bool {
	return !o.GetDeletionTimestamp().IsZero() && controllerutil.ContainsFinalizer(o, workkeys.ExecutionFinalizer)
}

// Options tune the dispatcher.
type Options struct {
	// Members hands out each member's client and credentials.
	Members *Members
	// FirstPass, when set, is closed once the binding controller has
	// decided every binding once since this replica began to lead; Works
	// are applied only after it (internal/redecide).
	FirstPass <-chan struct{}
	// HubCaches, when set, says whether the hub caches a Work's decision
	// rests on are watching the hub (internal/hubwatch): nothing is
	// written to a member while one is not.
	HubCaches HubCaches
	// Holds, when set, says whether the hub's controllers are deciding a
	// hold change of a Work's binding or template (holdqueue.Deciders):
	// no release of it is written to a member while one is.
	Holds Holds
}

// Holds says which controller is deciding a hold change of one of keys
// (redecide.BindingKey, redecide.TemplateKey), and of which; "" when none.
type Holds interface {
	Deciding(keys ...string) (controller, key string)
}

// HubCaches says whether what a Work's decision rests on is current: nil
// when every hub cache of federator's kinds and of the given template
// kinds watches the hub, and the Work's binding (redecide.BindingKey; ""
// for a Work no binding wrote) has been decided again since they last
// broke.
type HubCaches interface {
	Current(binding string, templates ...schema.GroupKind) error
}

// gates are what a member's Work controller waits on before it writes.
type gates struct {
	firstPass <-chan struct{}
	hubCaches HubCaches
	holds     Holds
}

// SetupWithManager registers the dispatcher: one Work controller per member
// Cluster, started as Clusters appear and stopped as they go.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	members := o.Members
	r := &clusterReconciler{mgr: mgr, hub: mgr.GetClient(), members: members, started: make(chan struct{}), running: map[string]*member{},
		setUp: map[string]bool{}, gates: gates{firstPass: o.FirstPass, hubCaches: o.HubCaches, holds: o.Holds}}
	if err := mgr.Add(r); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("member-clients", r.membersSetUp(mgr.GetClient())); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("dispatch-clusters").
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, deletionStarted{}))).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(r.clusterOfDeletedWork),
			builder.WithPredicates(awaitingFinalizer)).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(r.leavingClusterOfWork),
			builder.WithPredicates(workGone)).
		Complete(r)
}
