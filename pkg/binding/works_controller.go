package binding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	policykeys "github.com/federator-dev/federator/apis/policy"
	gatingv1alpha1 "github.com/federator-dev/federator/apis/policy/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/firstpass"
	"github.com/federator-dev/federator/internal/lanes"
	"github.com/federator-dev/federator/internal/overrides"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/internal/revision"
	"github.com/federator-dev/federator/internal/works"
	"github.com/federator-dev/federator/pkg/hold"
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
	// (internal/firstpass).
	FirstPass *firstpass.Signal
}

// Reconcile places the binding, decides what holds each target cluster,
// writes one Work per target and deletes the Works of clusters no longer
// targeted; its conditions Scheduled and WorksSynced are written once, at
// the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start := time.Now()
	result, outcome, err := r.reconcile(ctx, req)
	// Decided once, whatever the outcome: a binding that keeps failing
	// says so itself and does not hold the others back.
	r.FirstPass.Reconciled(firstPassKey(r.ClusterScoped, req.NamespacedName))
	result, err = retry.Quietly(result, err)
	if outcome != "" {
		ctrl.LoggerFrom(ctx).V(1).Info(outcome, "duration", time.Since(start).Round(time.Millisecond).String())
	}
	return result, err
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, string, error) {
	b := newView(r.ClusterScoped)
	if err := r.Client.Get(ctx, req.NamespacedName, b.obj); err != nil {
		return ctrl.Result{}, "", client.IgnoreNotFound(err)
	}
	if !b.obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, "binding deleted: its Works are deleted", r.finalize(ctx, b)
	}
	if err := r.ensureIdentity(ctx, b); err != nil {
		return ctrl.Result{}, "", err
	}
	tpl, err := template(ctx, r.Client, b)
	if apierrors.IsNotFound(err) {
		// The detector deletes bindings whose template is gone.
		metrics.SuspendedTemplates.Forget(suspendedKey(b))
		return ctrl.Result{}, "", nil
	}
	if err != nil {
		return ctrl.Result{}, "", err
	}
	if gone, policy, err := r.policyGone(ctx, b); err != nil || gone {
		if err != nil {
			return ctrl.Result{}, "", err
		}
		outcome, err := r.unclaimed(ctx, b, policy)
		return ctrl.Result{}, outcome, err
	}
	metrics.SuspendedTemplates.Observe(suspendedKey(b), tpl.GetAnnotations())

	before := b.snapshot()
	var events []func()
	clusters := &clusterv1alpha1.ClusterList{}
	// The cache's own objects, not copies: placement and the hold input
	// only read them, and each Cluster carries its member's list of APIs,
	// which a copy per Cluster per reconcile would duplicate (about 5 µs a
	// Cluster, five times the copy of one without it).
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, "", err
	}
	placed, err := placement.PlaceBinding(b.spec, clusters.Items, tpl.GetUID())
	if err != nil {
		if conditions.Set(&b.status.Conditions, unstamped, metav1.Condition{Type: workkeys.ConditionScheduled,
			Status: metav1.ConditionFalse, Reason: workkeys.ReasonUnschedulable, Message: err.Error()}) {
			msg := err.Error()
			events = append(events, func() {
				r.Recorder.Event(b.obj, corev1.EventTypeWarning, workkeys.EventReasonScheduleBindingFailed, msg)
			})
		}
		return r.finish(ctx, b, before, events, "unschedulable: "+err.Error())
	}
	if !equality.Semantic.DeepEqual(placed.Targets, b.spec.Clusters) && !(len(placed.Targets) == 0 && len(b.spec.Clusters) == 0) {
		// A merge patch without resourceVersion: spec.clusters is this
		// controller's alone (the detector keeps it when it rewrites the
		// spec), so a status write by the status controller since the read
		// is no reason to be refused.
		patch := client.MergeFrom(b.snapshot())
		b.spec.Clusters = placed.Targets
		if err := r.Client.Patch(ctx, b.obj, patch); err != nil {
			return ctrl.Result{}, "", err
		}
		before = b.snapshot()
	}
	conditions.Set(&b.status.Conditions, unstamped, placed.Scheduled())

	targets := make([]string, 0, len(b.spec.Clusters))
	for _, t := range b.spec.Clusters {
		targets = append(targets, t.Name)
	}
	in, governing, err := r.holdInput(ctx, b, tpl, clusters.Items, targets)
	if err != nil {
		return ctrl.Result{}, "", err
	}
	rolledBack, err := r.rolledBack(ctx, b, tpl, &in, governing, targets)
	if err != nil {
		return ctrl.Result{}, "", err
	}
	checks := r.Checks
	if checks == nil {
		checks = hold.Checks
	}
	decisions := hold.Decide(in, targets, checks)
	setApproved(b, in, decisions)
	delay := countdown.Effective(
		countdown.Source{Name: in.Template.String(), Annotations: in.Template.Annotations},
		countdown.Source{Name: in.Policy.String(), Annotations: in.Policy.Annotations}, r.MaxDeletionDelay)
	events = append(events, r.setDeletionDelay(b, tpl, delay)...)

	sync, syncErr := r.syncWorks(ctx, b, tpl, in, checks, decisions, delay, rolledBack)
	if retry.CacheBehind(syncErr) {
		// A Work changed or appeared since the cache saw it: retry quietly.
		return retry.Soon(), "", nil
	}
	synced := metav1.Condition{Type: workkeys.ConditionWorksSynced, Status: metav1.ConditionTrue,
		Reason: workkeys.ReasonWorksSynced, Message: workkeys.MessageWorksSynced}
	if syncErr != nil {
		synced = metav1.Condition{Type: workkeys.ConditionWorksSynced, Status: metav1.ConditionFalse,
			Reason: workkeys.ReasonSyncWorkFailed, Message: syncErr.Error()}
	}
	if conditions.Set(&b.status.Conditions, unstamped, synced) && syncErr != nil {
		msg := syncErr.Error()
		events = append(events, func() {
			r.Recorder.Event(b.obj, corev1.EventTypeWarning, workkeys.EventReasonSyncWorkFailed, msg)
		})
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

func (r *Reconciler) fresh() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// finish writes the binding's status once and, when it is stored, sends the
// events of the transitions it records.
func (r *Reconciler) finish(ctx context.Context, b view, before client.Object, events []func(), outcome string) (ctrl.Result, string, error) {
	if _, err := writeOwnedStatus(ctx, r.Client, r.fresh(), b, before, worksConditions, false); err != nil {
		return ctrl.Result{}, outcome, err
	}
	for _, e := range events {
		e()
	}
	return ctrl.Result{}, outcome, nil
}

// holdInput gathers what pkg/hold decides from: the template, the policy
// that claims it (from the cache; zero when it is gone), the suspension the
// binding carries from that policy, and the gates the policy and the target
// Clusters list; and the Rollout that governs the policy, if one does.
func (r *Reconciler) holdInput(ctx context.Context, b view, tpl *unstructured.Unstructured,
	clusters []clusterv1alpha1.Cluster, targets []string) (hold.Input, *revision.Rollout, error) {
	in := hold.Input{
		Template: hold.Object{Kind: tpl.GetKind(), Namespace: tpl.GetNamespace(), Name: tpl.GetName(),
			Annotations: tpl.GetAnnotations()},
	}
	if b.spec.Suspension != nil {
		in.Suspension = &b.spec.Suspension.Suspension
	}
	in.KnownClusters = make([]string, 0, len(clusters))
	for i := range clusters {
		c := &clusters[i]
		in.KnownClusters = append(in.KnownClusters, c.Name)
		if v, ok := c.Annotations[gatingv1alpha1.GatesAnnotation]; ok && slices.Contains(targets, c.Name) {
			gates, err := r.resolveGates(ctx, hold.ParseGates(v, "", "Cluster "+c.Name))
			if err != nil {
				return in, nil, err
			}
			if in.ClusterGates == nil {
				in.ClusterGates = map[string][]hold.Gate{}
			}
			in.ClusterGates[c.Name] = gates
		}
	}
	kind, ns, name := b.policyRef()
	var policy client.Object
	switch kind {
	case "PropagationPolicy":
		policy = &policyv1alpha1.PropagationPolicy{}
	case "ClusterPropagationPolicy":
		policy = &policyv1alpha1.ClusterPropagationPolicy{}
	default:
		return in, nil, nil
	}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, policy)
	if apierrors.IsNotFound(err) {
		// Like Karmada, a binding outlives its policy; it keeps the
		// suspension it carries.
		return in, nil, nil
	}
	if err != nil {
		return in, nil, err
	}
	in.Policy = hold.Object{Kind: kind, Namespace: ns, Name: name, Annotations: policy.GetAnnotations()}
	if v, ok := policy.GetAnnotations()[gatingv1alpha1.GatesAnnotation]; ok {
		if in.PolicyGates, err = r.resolveGates(ctx, hold.ParseGates(v, ns, in.Policy.String())); err != nil {
			return in, nil, err
		}
	}
	governing, err := r.rolloutInput(ctx, &in, b, tpl, kind, ns, name, targets)
	return in, governing, err
}

// rolloutInput adds the Rollout that governs the policy, if one does: a
// target is released only when the Rollout took in the template's
// current content (the binding's stamp names it) and released that
// revision to the target. The template's content hash goes onto its Works
// (templateHash), so the rollout controller judges health at this content.
func (r *Reconciler) rolloutInput(ctx context.Context, in *hold.Input, b view, tpl *unstructured.Unstructured,
	kind, ns, name string, targets []string) (*revision.Rollout, error) {
	ro, ok, err := revision.Governing(ctx, r.Client, kind, ns, name)
	if err != nil || !ok {
		return nil, err
	}
	hash, err := revision.Hash(tpl)
	if err != nil {
		return nil, err
	}
	stamp := b.obj.GetAnnotations()[rolloutsv1alpha1.RevisionAnnotation]
	in.Rollout = &hold.Rollout{Name: ro.String(), Released: map[string]bool{}, Waiting: map[string]string{}, TemplateHash: hash}
	for _, t := range targets {
		if ro.Released(stamp, hash, t) {
			in.Rollout.Released[t] = true
			continue
		}
		if s, ok := revision.ParseStamp(stamp); !ok || s.Hash != hash || s.RolloutUID != string(ro.UID()) {
			in.Rollout.Waiting[t] = "the rollout has not taken in this content of the template yet"
		} else {
			in.Rollout.Waiting[t] = ro.Waiting(t)
		}
	}
	return &ro, nil
}

// keptTemplate is a template as a revision kept it.
type keptTemplate struct {
	template *unstructured.Unstructured
	hash     string
}

// rolledBack finds, for each target the governing Rollout rolled back, the
// template as the revision it went back to kept it: that target is
// released with that content. A revision no longer kept, or one that did
// not hold the template, keeps the target held and says why.
func (r *Reconciler) rolledBack(ctx context.Context, b view, tpl *unstructured.Unstructured, in *hold.Input, ro *revision.Rollout,
	targets []string) (map[string]keptTemplate, error) {
	if in.Rollout == nil || ro == nil {
		return nil, nil
	}
	out := map[string]keptTemplate{}
	for _, c := range ro.Status.Clusters {
		t, rev := c.Name, c.Revision
		if c.State != rolloutsv1alpha1.StateRolledBack || !slices.Contains(targets, t) || in.Rollout.Released[t] {
			continue
		}
		key := ro.HistoryKey(rev)
		cr := &appsv1.ControllerRevision{}
		err := r.Client.Get(ctx, key, cr)
		if apierrors.IsNotFound(err) {
			// Kept before the Rollout said it rolled back: a cache that
			// has not seen it yet is no reason to hold.
			err = r.fresh().Get(ctx, key, cr)
		}
		if apierrors.IsNotFound(err) {
			in.Rollout.Waiting[t] = fmt.Sprintf("rolled back to revision %d, which is no longer kept (ControllerRevision %s is gone); apply a fixed template", rev, key)
			continue
		}
		if err != nil {
			return nil, err
		}
		kept, hash, found, err := revision.FromHistory(cr, revision.BindingKey(b.obj))
		if err != nil {
			return nil, err
		}
		if !found {
			in.Rollout.Waiting[t] = fmt.Sprintf("rolled back to revision %d, which did not hold this template; it keeps what it has", rev)
			continue
		}
		// The template as it is now, with the content it had then.
		kept.SetUID(tpl.GetUID())
		kept.SetResourceVersion(tpl.GetResourceVersion())
		out[t] = keptTemplate{template: kept, hash: hash}
		in.Rollout.Released[t] = true
	}
	return out, nil
}

// setApproved records on the binding whether the gates it waits for are
// open: Approved=False with the first gate hold's message while one holds,
// True once all are open, and no condition when nothing lists a gate.
func setApproved(b view, in hold.Input, decisions map[string]hold.Decision) {
	gated := len(in.PolicyGates) > 0
	for cluster := range decisions {
		gated = gated || len(in.ClusterGates[cluster]) > 0
	}
	if !gated {
		meta.RemoveStatusCondition(&b.status.Conditions, workkeys.ConditionApproved)
		return
	}
	approved := metav1.Condition{Type: workkeys.ConditionApproved, Status: metav1.ConditionTrue,
		Reason: workkeys.ReasonGatesOpened, Message: workkeys.MessageGatesOpened}
	clusters := make([]string, 0, len(decisions))
	for c := range decisions {
		clusters = append(clusters, c)
	}
	slices.Sort(clusters)
	for _, c := range clusters {
		for _, h := range decisions[c].Holds {
			if h.Reason == workkeys.ReasonGateClosed {
				approved = metav1.Condition{Type: workkeys.ConditionApproved, Status: metav1.ConditionFalse,
					Reason: workkeys.ReasonGateClosed, Message: h.Message}
				conditions.Set(&b.status.Conditions, unstamped, approved)
				return
			}
		}
	}
	conditions.Set(&b.status.Conditions, unstamped, approved)
}

// holdEvent tells a person, on the template, that dispatching was suspended
// or resumed, where to and why, when the holds on clusters that had a Work
// before this pass changed (on a first propagation: when something holds).
// Nil when nothing changed.
func (r *Reconciler) holdEvent(tpl *unstructured.Unstructured, b view, heldBefore map[string]bool, decisions map[string]hold.Decision) func() {
	if len(heldBefore) == 0 {
		// A first propagation: nothing was dispatched before, so only a
		// hold is news (an approval gate closed from the start).
		heldBefore = map[string]bool{}
		for cluster := range decisions {
			heldBefore[cluster] = false
		}
	}
	// Compared over the clusters that had a Work and still have one: a
	// cluster leaving or joining the placement is no suspension news.
	was, isHeld := map[string]bool{}, map[string]bool{}
	now := map[string]hold.Decision{}
	for cluster, held := range heldBefore {
		if d, targeted := decisions[cluster]; targeted {
			was[cluster], isHeld[cluster], now[cluster] = held, d.Held(), d
		}
	}
	before, after := hold.HeldSummary(was), hold.HeldSummary(isHeld)
	if before == after {
		return nil
	}
	policy := b.policyKey()
	if after == "" {
		return func() {
			r.Recorder.Eventf(tpl, corev1.EventTypeNormal, policykeys.EventReasonDispatchingResumed,
				"dispatching resumed to every cluster (policy %s)", policy)
		}
	}
	why := ""
	if notes := hold.Notes(now); len(notes) > 0 {
		why = ": " + strings.Join(notes, "; ")
	}
	return func() {
		r.Recorder.Eventf(tpl, corev1.EventTypeNormal, policykeys.EventReasonDispatchingSuspended,
			"dispatching suspended to %s (policy %s)%s", after, policy, why)
	}
}

func holdSummary(decisions map[string]hold.Decision) string {
	if s := hold.Summary(decisions); s != "" {
		return "; held: " + s
	}
	return ""
}

// ensureIdentity adds the finalizer and the permanent-id label Karmada's
// webhook would add, so Works can be found after the binding is gone.
func (r *Reconciler) ensureIdentity(ctx context.Context, b view) error {
	labels := b.obj.GetLabels()
	if controllerutil.ContainsFinalizer(b.obj, b.finalizer()) && labels[b.idLabel()] != "" {
		return nil
	}
	if labels == nil {
		labels = map[string]string{}
	}
	if labels[b.idLabel()] == "" {
		labels[b.idLabel()] = uuid.NewString()
	}
	b.obj.SetLabels(labels)
	controllerutil.AddFinalizer(b.obj, b.finalizer())
	return r.Client.Update(ctx, b.obj)
}

// syncResult counts what syncWorks did, and which clusters that had a Work
// were held before it.
type syncResult struct {
	created, updated, unchanged, deleted int
	// kept counts Works of clusters no longer targeted that are not
	// deleted because the deletion delay cannot be read.
	kept       int
	heldBefore map[string]bool
}

func (s syncResult) String() string {
	out := fmt.Sprintf("works synced: %d created, %d updated, %d unchanged, %d deleted",
		s.created, s.updated, s.unchanged, s.deleted)
	if s.kept > 0 {
		out += fmt.Sprintf(", %d kept (invalid deletion delay)", s.kept)
	}
	return out
}

// syncWorks writes the Work of every target, held as decisions say, with
// the deletion delay in force on its manifest, and deletes the others —
// unless the delay cannot be read: bad input never deletes.
func (r *Reconciler) syncWorks(ctx context.Context, b view, tpl *unstructured.Unstructured, in hold.Input, checks []hold.Check,
	decisions map[string]hold.Decision, delay countdown.Delay, rolledBack map[string]keptTemplate) (syncResult, error) {
	res := syncResult{heldBefore: map[string]bool{}}
	existing, err := worksOf(ctx, r.Client, b)
	if err != nil {
		return res, err
	}
	last := map[string]*workv1alpha1.Work{}
	for i := range existing {
		last[existing[i].Namespace] = &existing[i]
		if cluster, err := names.GetClusterName(existing[i].Namespace); err == nil {
			res.heldBefore[cluster] = ptr.Deref(existing[i].Spec.SuspendDispatching, false)
		}
	}

	// A Work held or released by this pass is written in the hold lane,
	// ahead of bulk writes (internal/lanes).
	for cluster, held := range res.heldBefore {
		if d, ok := decisions[cluster]; ok && d.Held() != held {
			ctx = lanes.Hold(ctx)
			break
		}
	}

	override := r.Override
	if override == nil {
		override = overrides.Karmada(r.Client)
	}
	var errs []error
	var desired []clusterWork
	wanted := map[string]bool{}
	workName := names.GenerateWorkName(tpl.GetKind(), tpl.GetName(), tpl.GetNamespace())
	for _, target := range b.spec.Clusters {
		ns := names.GenerateExecutionSpaceName(target.Name)
		wanted[ns] = true
		o := Origin{ClusterScoped: b.clusterScoped, BindingNamespace: b.obj.GetNamespace(), BindingName: b.obj.GetName(),
			BindingID: b.obj.GetLabels()[b.idLabel()], WorkNamespace: ns, WorkName: workName,
			ConflictResolution: b.spec.ConflictResolution}
		source := tpl
		var templateHash string
		if in.Rollout != nil {
			templateHash = in.Rollout.TemplateHash
		}
		if kept, ok := rolledBack[target.Name]; ok {
			source, templateHash = kept.template, kept.hash
		}
		manifest, applied, err := Manifest(source, target, b.spec.Replicas > 0, o, override)
		if err != nil {
			manifest, applied = overrides.LastGood(last[ns], err)
			if manifest == nil {
				errs = append(errs, fmt.Errorf("cluster %s: %w", target.Name, err))
				continue
			}
			errs = append(errs, fmt.Errorf("cluster %s: %w (its Work keeps the last manifest that could be built)", target.Name, err))
		} else {
			withDeletionDelay(manifest, delay)
		}
		work, err := r.work(b, manifest, applied, o, decisions[target.Name], templateHash)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		desired = append(desired, clusterWork{cluster: target.Name, work: work})
	}
	if err := r.confirmReleases(ctx, b, in, checks, decisions, desired, last); err != nil {
		return res, err
	}
	// One binding's Works are independent objects: written at once, a
	// reconcile waits for the slowest hub round trip, not for the sum of
	// them (a suspension rewrites every Work of every binding).
	results := make([]works.Result, len(desired))
	writeErrs := make([]error, len(desired))
	var g errgroup.Group
	g.SetLimit(parallelWorkWrites)
	for i, d := range desired {
		g.Go(func() error {
			results[i], writeErrs[i] = works.EnsureWork(ctx, r.Client, d.work, b.idLabel())
			return nil
		})
	}
	_ = g.Wait()
	for i, result := range results {
		switch {
		case writeErrs[i] != nil:
			errs = append(errs, fmt.Errorf("cluster %s: %w", desired[i].cluster, writeErrs[i]))
		case result == works.Created:
			res.created++
		case result == works.Updated:
			res.updated++
		default:
			res.unchanged++
		}
	}
	for i := range existing {
		if wanted[existing[i].Namespace] {
			continue
		}
		if delay.Problem != "" {
			res.kept++
			continue
		}
		if err := r.carryDelay(ctx, &existing[i], delay); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := r.Client.Delete(ctx, &existing[i]); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		} else {
			res.deleted++
		}
	}
	return res, errors.Join(errs...)
}

// clusterWork is the Work one target gets.
type clusterWork struct {
	cluster string
	work    *workv1alpha1.Work
}

// parallelWorkWrites bounds the Work writes of one binding in flight at
// once.
const parallelWorkWrites = 16

// work is the Work for one target: the manifest, and the hold decision as
// spec.suspendDispatching (so any Karmada execution controller holds it too)
// plus the hold annotations the dispatcher reports, and the overrides
// applied as Karmada records them.
func (r *Reconciler) work(b view, manifest *unstructured.Unstructured, applied map[string]string, o Origin,
	decision hold.Decision, templateHash string) (*workv1alpha1.Work, error) {
	raw, err := json.Marshal(manifest.Object)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{b.idLabel(): o.BindingID}
	annotations := map[string]string{
		workkeys.BindingGenerationAnnotation: strconv.FormatInt(b.obj.GetGeneration(), 10),
	}
	for k, v := range applied {
		annotations[k] = v
	}
	if b.clusterScoped {
		annotations[workv1alpha2.ClusterResourceBindingAnnotationKey] = o.BindingName
	} else {
		annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] = o.BindingNamespace
		annotations[workv1alpha2.ResourceBindingNameAnnotationKey] = o.BindingName
	}
	annotations[workv1alpha2.ResourceConflictResolutionAnnotation] = manifest.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation]
	if templateHash != "" {
		annotations[workkeys.TemplateHashAnnotation] = templateHash
	}
	if decision.Held() {
		annotations[workkeys.HoldReasonAnnotation] = decision.Reason()
		annotations[workkeys.HoldMessageAnnotation] = decision.Message()
	}
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.WorkNamespace, Name: o.WorkName, Labels: labels,
			Annotations: annotations, Finalizers: []string{workkeys.ExecutionFinalizer}},
		Spec: workv1alpha1.WorkSpec{
			Workload:                    workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			SuspendDispatching:          ptr.To(decision.Held()),
			PreserveResourcesOnDeletion: b.spec.PreserveResourcesOnDeletion,
		},
	}, nil
}

func suspendedKey(b view) metrics.SuspendedKey {
	return metrics.SuspendedKey{Kind: b.spec.Resource.Kind, Namespace: b.spec.Resource.Namespace, Name: b.spec.Resource.Name}
}

// finalize deletes the binding's Works (their own finalizer then removes
// the objects from members) and releases the binding.
func (r *Reconciler) finalize(ctx context.Context, b view) error {
	if !controllerutil.ContainsFinalizer(b.obj, b.finalizer()) {
		return nil
	}
	existing, err := worksOf(ctx, r.Client, b)
	if err != nil {
		return err
	}
	for i := range existing {
		if err := r.Client.Delete(ctx, &existing[i]); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	metrics.SuspendedTemplates.Forget(suspendedKey(b))
	controllerutil.RemoveFinalizer(b.obj, b.finalizer())
	return client.IgnoreNotFound(r.Client.Update(ctx, b.obj))
}
