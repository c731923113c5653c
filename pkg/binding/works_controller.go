package binding

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/google/uuid"
	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/holdqueue"
	"github.com/federator-dev/federator/internal/holdwrites"
	"github.com/federator-dev/federator/internal/overrides"
	"github.com/federator-dev/federator/internal/redecide"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/pkg/hold"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/metrics"
	"github.com/federator-dev/federator/pkg/placement"
)

// Reconciler turns one kind of binding into Works: placement, holds, one
// Work per target cluster.
type Reconciler struct {
	Client client.Client
	// APIReader reads bindings uncached before a condition changes;
	// Client when nil.
	APIReader     client.Reader
	Recorder      record.EventRecorder
	ClusterScoped bool
	// Checks decide holds; hold.Checks when nil.
	Checks []hold.Check
	// MaxDeletionDelay caps federator.dev/deletion-delay (0: no cap).
	MaxDeletionDelay time.Duration
	// Override applies override policies to each cluster's manifest;
	// overrides.Karmada(Client) when nil.
	Override overrides.Func
	// Clock judges gates (gates.go); the wall clock when nil.
	Clock clock.PassiveClock
	// FirstPass, when set, is told of every binding reconciled
	// (internal/redecide).
	FirstPass *redecide.FirstPass
	// CatchUp, when set, is told of every binding decided
	// (internal/redecide).
	CatchUp *redecide.Round
	// waiters records the gates each binding's template lists, for the
	// Gate watch; nil in tests that build a Reconciler by hand.
	waiters *gateWaiters
	// queue, when set, is the controller's queue seen from the hold path:
	// a pass gives way to hold changes (internal/holdqueue).
	queue *holdqueue.Watched[reconcile.Request]
	// requeue, when set, queues a request again after a while whatever
	// its pass returned; queue.Later when nil.
	requeue func(reconcile.Request, time.Duration)
}

// later queues req again after d (requeue, or the controller's queue).
func (r *Reconciler) later(req reconcile.Request, d time.Duration) {
	switch {
	case r.requeue != nil:
		r.requeue(req, d)
	case r.queue != nil:
		r.queue.Later(req, d)
	}
}

// Reconcile places the binding, decides what holds each target cluster,
// writes one Work per target and deletes the Works of clusters no longer
// targeted; its conditions Scheduled and WorksSynced are written once, at
// the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start := time.Now()
	ticket := r.CatchUp.Begin()
	if r.queue != nil {
		ctx = holdwrites.WithTurn(ctx, r.queue.Turn(req))
	}
	var decided decision
	result, outcome, err := r.reconcile(ctx, req, &decided)
	if errors.Is(err, holdwrites.ErrGaveWay) {
		// A hold change is queued, of this binding or waiting for this
		// worker: this pass comes back (at once when the hold change is
		// its own) and decides afresh, writing what it gave up.
		result, outcome, err = retry.Soon(), "gave way to a hold change", nil
	}
	// Only a pass that decided counts for the dispatcher's first-pass wait:
	// one that stopped before (a cache behind, a failed read) leaves the
	// Works as the previous leader left them, holds not yet written. A
	// binding that keeps failing says so itself; the wait for it ends after
	// a while (setup.go) so it does not hold the others back.
	if decided.decided {
		key := keyOf(req.NamespacedName)
		r.FirstPass.Reconciled(key)
		r.CatchUp.Decided(key, ticket, decided.generation)
	}
	result, err = retry.Quietly(result, err)
	if err != nil && result.RequeueAfter > 0 {
		// controller-runtime retries a failed pass with its backoff and
		// drops RequeueAfter: a gate's window that starts meanwhile would
		// be honoured only when the backoff (up to minutes) ends.
		r.later(req, result.RequeueAfter)
	}
	if outcome != "" {
		ctrl.LoggerFrom(ctx).V(1).Info(outcome, "duration", time.Since(start).Round(time.Millisecond).String())
	}
	return result, err
}

// decision is what a pass decided, for the dispatchers' waits.
type decision struct {
	// decided: the pass has written (or found written) what holds each of
	// the binding's Works, or found there is nothing to decide.
	decided bool
	// generation of the binding the pass read (the largest there is when
	// the binding is gone).
	generation int64
}

// reconcile fills in decided.
func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request, decided *decision) (ctrl.Result, string, error) {
	b := bindingview.New(r.ClusterScoped)
	if err := r.Client.Get(ctx, req.NamespacedName, b.Obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.waiters.set(req.NamespacedName, nil)
		}
		*decided = decision{decided: apierrors.IsNotFound(err), generation: math.MaxInt64}
		return ctrl.Result{}, "", client.IgnoreNotFound(err)
	}
	decided.generation = b.Obj.GetGeneration()
	if !b.Obj.GetDeletionTimestamp().IsZero() {
		decided.decided = true
		return ctrl.Result{}, "binding deleted: its Works are deleted", r.finalize(ctx, b)
	}
	if err := r.ensureIdentity(ctx, b); err != nil {
		return ctrl.Result{}, "", err
	}
	existing, err := bindingview.WorksOf(ctx, r.Client, b)
	if err != nil {
		return ctrl.Result{}, "", err
	}
	tpl, err := templateAtLeast(ctx, r.Client, r.fresh(), b, existing)
	if apierrors.IsNotFound(err) {
		metrics.SuspendedTemplates.Forget(suspendedKey(b))
		outcome, err := r.orphaned(ctx, b)
		decided.decided = err == nil
		return ctrl.Result{}, outcome, err
	}
	if err != nil {
		return ctrl.Result{}, "", err
	}
	if _, err := r.dropLeft(ctx, b); err != nil {
		return ctrl.Result{}, "", err
	}
	if gone, policy, err := r.policyGone(ctx, b); err != nil || gone {
		if err != nil {
			return ctrl.Result{}, "", err
		}
		outcome, err := r.unclaimed(ctx, b, tpl, policy)
		decided.decided = err == nil
		return ctrl.Result{}, outcome, err
	}
	metrics.SuspendedTemplates.Observe(suspendedKey(b), tpl.GetAnnotations())

	before := b.Snapshot()
	var events []func()
	clusters := &clusterv1alpha1.ClusterList{}
	// The cache's own objects, not copies: placement and the hold input
	// only read them, and each Cluster carries its member's list of APIs,
	// which a copy per Cluster per reconcile would duplicate (about 5 µs a
	// Cluster, five times the copy of one without it).
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, "", err
	}
	placed, err := placement.PlaceBinding(b.Spec, clusters.Items, tpl.GetUID())
	if err != nil {
		if conditions.Set(&b.Status.Conditions, bindingview.Unstamped, metav1.Condition{Type: workkeys.ConditionScheduled,
			Status: metav1.ConditionFalse, Reason: workkeys.ReasonUnschedulable, Message: err.Error()}) {
			msg := err.Error()
			events = append(events, func() {
				r.Recorder.Event(b.Obj, corev1.EventTypeWarning, workkeys.EventReasonScheduleBindingFailed, msg)
			})
		}
		decided.decided = true
		return r.finish(ctx, b, before, events, "unschedulable: "+err.Error())
	}
	if !equality.Semantic.DeepEqual(placed.Targets, b.Spec.Clusters) && !(len(placed.Targets) == 0 && len(b.Spec.Clusters) == 0) {
		// A merge patch without resourceVersion: spec.clusters is this
		// controller's alone (the detector keeps it when it rewrites the
		// spec), so a status write by the status controller since the read
		// is no reason to be refused.
		patch := client.MergeFrom(b.Snapshot())
		b.Spec.Clusters = placed.Targets
		if err := r.Client.Patch(ctx, b.Obj, patch); err != nil {
			return ctrl.Result{}, "", err
		}
		before = b.Snapshot()
	}
	conditions.Set(&b.Status.Conditions, bindingview.Unstamped, placed.Scheduled())

	targets := make([]string, 0, len(b.Spec.Clusters))
	for _, t := range b.Spec.Clusters {
		targets = append(targets, t.Name)
	}
	override := r.passOverride()
	in, governing, err := r.holdInput(ctx, b, tpl, clusters.Items, targets, override)
	if err != nil {
		return ctrl.Result{}, "", err
	}
	rolledBack, err := r.rolledBack(ctx, b, tpl, &in, governing, targets)
	if err != nil {
		return ctrl.Result{}, "", err
	}
	checks := r.checks()
	decisions := hold.Decide(in, targets, checks)
	setApproved(b, in, decisions)
	delay := countdown.Effective(
		countdown.Source{Name: in.Template.String(), Annotations: in.Template.Annotations},
		countdown.Source{Name: in.Policy.String(), Annotations: in.Policy.Annotations}, r.MaxDeletionDelay)
	events = append(events, r.setDeletionDelay(b, tpl, delay)...)

	sync, syncErr := r.syncWorks(ctx, b, tpl, in, checks, decisions, delay, rolledBack, override, pullClusters(clusters.Items))
	if errors.Is(syncErr, holdwrites.ErrGaveWay) {
		// Not a failure to report on the binding: Reconcile retries.
		return ctrl.Result{}, "", syncErr
	}
	if retry.CacheBehind(syncErr) {
		// A Work changed or appeared since the cache saw it: retry quietly.
		return retry.Soon(), "", nil
	}
	// Written, up to the clusters whose Work could not be (those say why);
	// a pass that wrote none of them decided nothing.
	decided.decided = syncErr == nil || sync.created+sync.updated+sync.unchanged > 0
	synced := metav1.Condition{Type: workkeys.ConditionWorksSynced, Status: metav1.ConditionTrue,
		Reason: workkeys.ReasonWorksSynced, Message: workkeys.MessageWorksSynced}
	if syncErr != nil {
		synced = metav1.Condition{Type: workkeys.ConditionWorksSynced, Status: metav1.ConditionFalse,
			Reason: workkeys.ReasonSyncWorkFailed, Message: syncErr.Error()}
	}
	if conditions.Set(&b.Status.Conditions, bindingview.Unstamped, synced) && syncErr != nil {
		msg := syncErr.Error()
		events = append(events, func() {
			r.Recorder.Event(b.Obj, corev1.EventTypeWarning, workkeys.EventReasonSyncWorkFailed, msg)
		})
	}
	if syncErr == nil {
		setDispatching(b, decisions)
	}
	if event := r.holdEvent(tpl, b, sync.heldBefore, decisions); event != nil && syncErr == nil {
		// The Works just written are the stored record of this transition
		// (the next pass reads it from them), so it is told now, whatever
		// becomes of the status write below.
		event()
	}
	outcome := sync.String() + holdSummary(decisions)
	if syncErr != nil {
		outcome += "; failed: " + syncErr.Error()
	}
	result, _, err := r.finish(ctx, b, before, events, outcome)
	return r.recheckGates(result, in), outcome, errors.Join(syncErr, err)
}

// checks are the hold checks this reconciler decides with.
func (r *Reconciler) checks() []hold.Check {
	if r.Checks == nil {
		return hold.Checks
	}
	return r.Checks
}

// orphaned deletes a binding whose template is gone, once the API server
// confirms it, as Karmada's garbage collector does through the binding's
// owner reference; its Works then go (finalize), each after its deletion
// delay. The detector deletes it too when it sees the template go, but a
// template deleted while no replica led, or while the leader's caches did
// not watch, brings it no event, and the Works, released from before,
// would be dispatched from then on (found by the chaos checker: a member
// stored a version 2.6 s after its template's deletion, the policy
// suspended meanwhile, after a change of leader). A template the cache
// has not received yet (read fresh: it exists, perhaps created again) is
// waited for: the detector brings the binding up to date.
func (r *Reconciler) orphaned(ctx context.Context, b bindingview.View) (string, error) {
	t := bindingview.TemplateObject(b)
	if r.APIReader != nil {
		err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(t), t)
		if err == nil {
			return "", cacheBehind(t.GroupVersionKind().Group, t.GetKind(), t.GetName(), "the template is on the API server but not yet in the cache")
		}
		if !apierrors.IsNotFound(err) {
			return "", err
		}
	}
	uid := b.Obj.GetUID()
	if err := r.Client.Delete(ctx, b.Obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return "", err
	}
	return "template gone: binding deleted", nil
}

func (r *Reconciler) fresh() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// finish writes the binding's status once and, when it is stored, sends the
// events of the transitions it records.
func (r *Reconciler) finish(ctx context.Context, b bindingview.View, before client.Object, events []func(), outcome string) (ctrl.Result, string, error) {
	if _, err := bindingview.WriteOwnedStatus(ctx, r.Client, r.fresh(), b, before, bindingview.WorksConditions, false); err != nil {
		return ctrl.Result{}, outcome, err
	}
	for _, e := range events {
		e()
	}
	return ctrl.Result{}, outcome, nil
}

// ensureIdentity adds the finalizer and the permanent-id label Karmada's
// webhook would add, so Works can be found after the binding is gone.
func (r *Reconciler) ensureIdentity(ctx context.Context, b bindingview.View) error {
	labels := b.Obj.GetLabels()
	if controllerutil.ContainsFinalizer(b.Obj, b.Finalizer()) && labels[b.IDLabel()] != "" {
		return nil
	}
	if labels == nil {
		labels = map[string]string{}
	}
	if labels[b.IDLabel()] == "" {
		labels[b.IDLabel()] = uuid.NewString()
	}
	b.Obj.SetLabels(labels)
	controllerutil.AddFinalizer(b.Obj, b.Finalizer())
	return r.Client.Update(ctx, b.Obj)
}

func suspendedKey(b bindingview.View) metrics.SuspendedKey {
	return metrics.SuspendedKey{Kind: b.Spec.Resource.Kind, Namespace: b.Spec.Resource.Namespace, Name: b.Spec.Resource.Name}
}

// finalize deletes the binding's Works (their own finalizer then removes
// the objects from members) and releases the binding. The Works are
// listed from the API server: one the cache has not seen yet would
// outlive the binding.
func (r *Reconciler) finalize(ctx context.Context, b bindingview.View) error {
	if !controllerutil.ContainsFinalizer(b.Obj, b.Finalizer()) {
		return nil
	}
	existing, err := storedWorksOf(ctx, r.fresh(), b)
	if err != nil {
		return err
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	pull := pullClusters(clusters.Items)
	var errs []error
	for i := range existing {
		if r.keepForCountdown(ctx, &existing[i], pull, &errs) {
			// Kept, and left behind: the binding that places the object
			// there again takes it over (works.AdoptOrphans).
			continue
		}
		if err := r.Client.Delete(ctx, &existing[i]); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	metrics.SuspendedTemplates.Forget(suspendedKey(b))
	controllerutil.RemoveFinalizer(b.Obj, b.Finalizer())
	return client.IgnoreNotFound(r.Client.Update(ctx, b.Obj))
}

// pullClusters are the names of the Clusters in Pull mode, whose agents
// apply their Works.
func pullClusters(clusters []clusterv1alpha1.Cluster) map[string]bool {
	pull := map[string]bool{}
	for i := range clusters {
		if membership.Pull(&clusters[i]) {
			pull[clusters[i].Name] = true
		}
	}
	return pull
}
