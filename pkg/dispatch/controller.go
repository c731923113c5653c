package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/finalizers"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/pkg/metrics"
)

// WorkReconciler dispatches the Works of one member cluster.
type WorkReconciler struct {
	Hub client.Client
	// HubReader reads the hub uncached; Hub when nil.
	HubReader client.Reader
	Members   *Members
	Recorder  record.EventRecorder
	Cluster   string
	// Clock starts deletion countdowns; the real clock when nil.
	Clock clock.PassiveClock
	// FirstPass, when set, is closed once the binding controller has
	// decided every binding once since this replica began to lead
	// (internal/redecide): nothing is applied before.
	FirstPass <-chan struct{}
	// HubCaches, when set, is asked before the first member write of a
	// pass: a Work from a cache that is not watching the hub may be behind
	// a hold the cache has not seen, and waits until it watches again.
	HubCaches HubCaches
	// Holds, when set, is asked with HubCaches: a release is not written
	// while the hub's controllers decide a hold change of its Work.
	Holds Holds
	// watch, when set, makes the member's objects of a kind watched.
	watch *memberWatch
	// memberWrites, when set, bounds the writes in flight to the member
	// (one slot per write); the reconcile's hub writes take none.
	memberWrites chan struct{}
	// statusWritten holds, per Work, the resourceVersion of this
	// reconciler's last stored status write: a pass that reads an older
	// Work from the cache would be refused (409) and waits for the cache
	// instead of spending a hub write on it.
	statusWritten sync.Map
	// frozen are the Works a Freeze kept from their member (a write
	// refused by Members' FreezeGuard): a change of the Freezes queues
	// them again, and nothing else is queued for a freeze.
	frozen sync.Map
}

// frozenRetry comes back just after the freeze ends by itself; a freeze
// without an end, or one that cannot be told, is waited for by the change
// of the Freezes that ends it (frozenRequests), and by a retry a second
// later for one that cannot be told.
func frozenRetry(f *FrozenError) ctrl.Result {
	if f.Freeze != "" && f.Ends.IsZero() {
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: f.RetryAfter()}
}

// frozenRequests are the Works a Freeze kept from their member.
func (r *WorkReconciler) frozenRequests() []reconcile.Request {
	var out []reconcile.Request
	r.frozen.Range(func(k, _ any) bool {
		out = append(out, reconcile.Request{NamespacedName: k.(types.NamespacedName)})
		return true
	})
	return out
}

// written is a status write this reconciler stored: the Work's UID (a
// Work deleted and created again starts afresh) and the resourceVersion
// the write gave it.
type written struct {
	uid             types.UID
	resourceVersion string
}

// Reconcile reads the Work, honours its hold, applies or deletes its
// manifests in the member, and writes the Work's status once, at the end.
func (r *WorkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.FirstPass != nil {
		// A Work a previous leader left may be behind its template and
		// its holds: it waits until the binding controller decided it again.
		select {
		case <-r.FirstPass:
		case <-ctx.Done():
			return ctrl.Result{}, nil
		}
	}
	start := time.Now()
	result, outcome, err := r.reconcile(ctx, req)
	if retry.CacheBehind(err) {
		// A newer Work is on its way through the cache.
		return retry.Soon(), nil
	}
	if outcome != "" {
		ctrl.LoggerFrom(ctx).V(1).Info(outcome, "duration", time.Since(start).Round(time.Millisecond).String())
	}
	return result, err
}

func (r *WorkReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, string, error) {
	work := &workv1alpha1.Work{}
	if err := r.Hub.Get(ctx, req.NamespacedName, work); err != nil {
		if apierrors.IsNotFound(err) {
			r.statusWritten.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, "", client.IgnoreNotFound(err)
	}
	if last, ok := r.statusWritten.Load(req.NamespacedName); ok && last.(written).uid == work.UID &&
		retry.Behind(work.ResourceVersion, last.(written).resourceVersion) {
		// The cache has not seen this reconciler's own last status write
		// yet: a write from this copy would be refused. Nothing in the
		// Work's spec can be newer than what that write saw.
		return retry.Soon(), "", nil
	}
	if !work.DeletionTimestamp.IsZero() {
		// The status of a Work being deleted is not written again; one
		// created again under its name starts afresh.
		r.statusWritten.Delete(req.NamespacedName)
		outcome, err := r.delete(ctx, work)
		if frozen := asFrozen(err); frozen != nil {
			// Deleting is a write too: it waits for the freeze to end.
			r.frozen.Store(req.NamespacedName, struct{}{})
			return frozenRetry(frozen), "held: " + frozen.Message, nil
		}
		return ctrl.Result{}, outcome, err
	}
	// Against the Work as read: a finalizer another controller added since
	// is kept (a conflict retries with the Work as it is now).
	if err := finalizers.Add(ctx, r.Hub, work, workkeys.ExecutionFinalizer); err != nil {
		return ctrl.Result{}, "", err
	}

	before := work.DeepCopy()
	// Events describe transitions; they are sent only once the status that
	// records the transition is stored, so a reconcile working from a stale
	// cache (its write refused) sends none.
	var events []func()
	dispatching, held := DispatchingCondition(work)

	var syncErr, watchErr error
	var outcome string
	member, err := r.Members.Client(ctx, r.Cluster)
	if err == nil {
		watchErr = r.ensureWatches(ctx, work)
	}
	switch {
	case err != nil:
		syncErr = err
	case held:
		syncErr = r.takeBackHeld(ctx, member, work)
		// Status is still collected while held, so a person sees what the
		// member runs; an unreachable member keeps the last status.
		if runs, err := r.collect(ctx, member, work, &work.Status); err == nil && runs {
			appliedAsHeld(work)
		}
		outcome = "held: " + dispatching.Reason + ": " + work.Annotations[workkeys.HoldMessageAnnotation]
	default:
		var results map[applyResult]int
		results, syncErr = r.apply(ctx, member, work, &work.Status)
		if errors.Is(syncErr, errWorkChanged) {
			// Nothing was written to the member: the Work changes on its
			// way through the cache, and the next pass reads that version.
			return retry.Soon(), "", nil
		}
		if errors.Is(syncErr, errHubBehind) {
			// Nothing was written to the member: the Work may be behind
			// writes a hub cache has not received; it is read again once
			// the caches watch the hub.
			return ctrl.Result{RequeueAfter: hubBehindRetry}, "waiting: " + syncErr.Error(), nil
		}
		if errors.Is(syncErr, errHoldDeciding) {
			// Nothing was written to the member: the hold change being
			// decided may withdraw what the Work releases.
			return ctrl.Result{RequeueAfter: holdDecidingRetry}, "waiting: " + syncErr.Error(), nil
		}
		if syncErr == nil && results[applyCreated]+results[applyUpdated] > 0 {
			observeLatency(r.Cluster, work)
		}
		outcome = fmt.Sprintf("applied: %d created, %d updated, %d unchanged",
			results[applyCreated], results[applyUpdated], results[applyUnchanged])
	}
	var result ctrl.Result
	frozen := asFrozen(syncErr)
	switch {
	case frozen != nil && frozen.Freeze == "":
		// Whether a Freeze holds the member cannot be told: nothing was
		// written, and nothing is recorded until it can.
		r.frozen.Store(req.NamespacedName, struct{}{})
		return ctrl.Result{RequeueAfter: hubBehindRetry}, "waiting: " + frozen.Message, nil
	case frozen != nil:
		// A Freeze holds the member: what was not written waits for it
		// to end (a change of the Freezes queues the Work again), and the
		// Work says so. Applied keeps what the member runs.
		// A Work held already keeps its holder's reason (what a freeze
		// kept from it is taking back a countdown).
		r.frozen.Store(req.NamespacedName, struct{}{})
		if !held {
			dispatching = metav1.Condition{Type: workkeys.ConditionDispatching, Status: metav1.ConditionFalse,
				Reason: gatingv1alpha1.ReasonFrozen, Message: frozen.Message}
		}
		outcome, syncErr = "held: "+frozen.Message, nil
		result = frozenRetry(frozen)
	default:
		r.frozen.Delete(req.NamespacedName)
	}
	// Dispatching carries the generation it was decided for (Karmada's
	// carries none), so a reader tells "held at this spec" from "held
	// before the spec changed" (a held Work whose manifest changes costs
	// one status write for it). Applied carries it too: it says which spec
	// the member runs.
	// The event tells of every transition, the first dispatch of a new
	// Work included, as Karmada's execution controller sends it: Karmada's
	// own e2e and users' scripts wait for it on each Work.
	if conditions.Set(&work.Status.Conditions, work.Generation, dispatching) {
		events = append(events, func() {
			r.Recorder.Event(work, corev1.EventTypeNormal, workkeys.EventReasonWorkDispatching, dispatching.Message)
		})
	}
	if syncErr != nil {
		outcome = "failed: " + syncErr.Error()
	}
	if frozen == nil && (!held || err != nil) {
		if event := r.setApplied(work, syncErr); event != nil {
			events = append(events, event)
		}
	}

	// Locked: the events above depend on this write.
	stored, err := conditions.PatchStatus(ctx, r.Hub, before, work, true)
	if err != nil {
		if apierrors.IsConflict(err) && syncErr == nil {
			return ctrl.Result{}, "", err
		}
		return ctrl.Result{}, outcome, errors.Join(syncErr, err)
	}
	if stored {
		r.statusWritten.Store(req.NamespacedName, written{uid: work.UID, resourceVersion: work.ResourceVersion})
	}
	for _, event := range events {
		event()
	}
	if watchErr != nil && syncErr == nil {
		// Until the member is watched, its status changes reach the hub
		// only on a reconcile: come back until the watch is in place.
		if retry := r.watchRetry(ctx, watchErr); result.RequeueAfter == 0 || retry < result.RequeueAfter {
			result.RequeueAfter = retry
		}
		return result, outcome, nil
	}
	return result, outcome, syncErr
}

// observeLatency records how long the change just applied took to get
// here from the hub: since the binding controller wrote it into the Work, or
// since the Work was released from a hold, whichever is later.
func observeLatency(cluster string, work *workv1alpha1.Work) {
	start, err := time.Parse(time.RFC3339Nano, work.Annotations[workkeys.ChangedAtAnnotation])
	if err != nil {
		return // written by something else than the binding controller
	}
	if c := meta.FindStatusCondition(work.Status.Conditions, workkeys.ConditionDispatching); c != nil &&
		c.Status == metav1.ConditionTrue && c.LastTransitionTime.After(start) {
		start = c.LastTransitionTime.Time
	}
	metrics.DispatchLatency.WithLabelValues(cluster).Observe(time.Since(start).Seconds())
}

// apply applies every manifest and counts what each application did.
func (r *WorkReconciler) apply(ctx context.Context, member client.Client, work *workv1alpha1.Work, status *workv1alpha1.WorkStatus) (map[applyResult]int, error) {
	results := map[applyResult]int{}
	var errs []error
	var statuses []workv1alpha1.ManifestStatus
	confirmed := false
	confirm := func() error {
		if confirmed {
			return nil
		}
		confirmed = true
		return r.confirmWork(ctx, work)
	}
	for i, m := range work.Spec.Workload.Manifests {
		manifest, err := decodeManifest(m)
		if err != nil {
			errs = append(errs, fmt.Errorf("manifest %d: %w", i, err))
			continue
		}
		current, result, adopted, err := r.applyManifest(ctx, member, manifest, confirm)
		if errors.Is(err, errWorkChanged) || errors.Is(err, errHubBehind) || errors.Is(err, errHoldDeciding) {
			return results, err
		}
		if adopted {
			if err := r.takenBack(ctx, manifest); err != nil {
				errs = append(errs, err)
			}
		}
		if err != nil {
			metrics.ManifestWrites.WithLabelValues(r.Cluster, "error").Inc()
			errs = append(errs, err)
			continue
		}
		metrics.ManifestWrites.WithLabelValues(r.Cluster, string(result)).Inc()
		results[result]++
		if ms, ok := manifestStatus(member, i, current); ok {
			statuses = append(statuses, ms)
		}
	}
	if len(errs) > 0 {
		//lint:ignore ST1005 Karmada's Applied condition message, matched exactly
		return results, fmt.Errorf("Failed to apply all manifests (%d/%d): %w",
			len(work.Spec.Workload.Manifests)-len(errs), len(work.Spec.Workload.Manifests), errors.Join(errs...))
	}
	status.ManifestStatuses = statuses
	return results, nil
}

// applyManifest applies one manifest within the member's bound on writes
// in flight.
func (r *WorkReconciler) applyManifest(ctx context.Context, member client.Client, manifest *unstructured.Unstructured,
	beforeWrite func() error) (*unstructured.Unstructured, applyResult, bool, error) {
	release, err := r.memberSlot(ctx)
	if err != nil {
		return nil, "", false, err
	}
	defer release()
	return applyManifest(ctx, member, manifest, r.Cluster, beforeWrite)
}

// memberSlot waits for one of the member's write slots; release gives it
// back.
func (r *WorkReconciler) memberSlot(ctx context.Context) (release func(), err error) {
	if r.memberWrites == nil {
		return func() {}, nil
	}
	select {
	case r.memberWrites <- struct{}{}:
		return func() { <-r.memberWrites }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *WorkReconciler) collect(ctx context.Context, member client.Client, work *workv1alpha1.Work, status *workv1alpha1.WorkStatus) (runs bool, _ error) {
	var statuses []workv1alpha1.ManifestStatus
	runs = len(work.Spec.Workload.Manifests) > 0
	for i, m := range work.Spec.Workload.Manifests {
		manifest, err := decodeManifest(m)
		if err != nil {
			return false, err
		}
		current, err := getMemberObject(ctx, member, manifest)
		if err != nil {
			return false, err
		}
		if ms, ok := manifestStatus(member, i, current); ok {
			statuses = append(statuses, ms)
		}
		hash, err := desiredHash(manifest)
		runs = runs && err == nil && current != nil && current.GetAnnotations()[workkeys.AppliedHashAnnotation] == hash
	}
	status.ManifestStatuses = statuses
	return runs, nil
}

// appliedAsHeld moves a held Work's Applied condition (True) to the
// Work's generation when the member already runs every manifest the Work
// carries (their applied-hash is the manifests'): Applied says which spec
// the member runs, and a hold that changed only spec.suspendDispatching
// left it running this one. A manifest changed while held is not run yet,
// and Applied stays at the generation before. No event: nothing was sent.
func appliedAsHeld(work *workv1alpha1.Work) {
	applied := meta.FindStatusCondition(work.Status.Conditions, workkeys.ConditionApplied)
	if applied == nil || applied.Status != metav1.ConditionTrue || applied.ObservedGeneration == work.Generation {
		return
	}
	current := *applied
	current.ObservedGeneration = work.Generation
	meta.SetStatusCondition(&work.Status.Conditions, current)
}

// ensureWatches makes sure the member's objects of every kind the Work
// carries are watched, so their status changes and deletions requeue it.
func (r *WorkReconciler) ensureWatches(ctx context.Context, work *workv1alpha1.Work) error {
	if r.watch == nil {
		return nil
	}
	cfg, err := r.Members.config(ctx, r.Cluster)
	if err != nil {
		return err
	}
	gvks := make([]schema.GroupVersionKind, 0, len(work.Spec.Workload.Manifests))
	for _, m := range work.Spec.Workload.Manifests {
		var t metav1.TypeMeta
		if err := json.Unmarshal(m.Raw, &t); err != nil {
			continue // reported by apply as the manifest's error
		}
		gvks = append(gvks, t.GroupVersionKind())
	}
	err = r.watch.ensure(ctx, cfg, gvks)
	if err == nil {
		r.watchRetry(ctx, nil)
	}
	return err
}

// watchRetry records how ensuring the member's watch went, logs it when it
// is news (a new error, or the watch working again), and returns how soon
// to come back.
func (r *WorkReconciler) watchRetry(ctx context.Context, err error) time.Duration {
	retry, line := r.watch.record(err, time.Now())
	if line != "" {
		ctrl.LoggerFrom(ctx).Info(line, "cluster", r.Cluster)
	}
	return retry
}

// setApplied records the outcome of applying and returns the event that
// tells a person about a transition, nil when there is none.
func (r *WorkReconciler) setApplied(work *workv1alpha1.Work, syncErr error) func() {
	applied := metav1.Condition{Type: workkeys.ConditionApplied, Status: metav1.ConditionTrue,
		Reason: workkeys.ReasonAppliedSuccessful, Message: workkeys.MessageAppliedSuccessful}
	if syncErr != nil {
		applied = metav1.Condition{Type: workkeys.ConditionApplied, Status: metav1.ConditionFalse,
			Reason: workkeys.ReasonAppliedFailed, Message: syncErr.Error()}
	}
	if !conditions.Set(&work.Status.Conditions, work.Generation, applied) {
		return nil
	}
	if syncErr != nil {
		return func() {
			r.Recorder.Eventf(work, corev1.EventTypeWarning, workkeys.EventReasonSyncFailed,
				"Failed to sync work(%s/%s) to cluster(%s): %v", work.Namespace, work.Name, r.Cluster, syncErr)
		}
	}
	return func() {
		r.Recorder.Eventf(work, corev1.EventTypeNormal, workkeys.EventReasonSyncSucceed,
			"Sync work(%s/%s) to cluster(%s) successful.", work.Namespace, work.Name, r.Cluster)
	}
}
