package rollout

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	gatingv1alpha1 "github.com/federator-dev/federator/apis/policy/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/internal/revision"
	"github.com/federator-dev/federator/pkg/gatestate"
	"github.com/federator-dev/federator/pkg/metrics"
)

// DefaultProgressDeadline is spec.progressDeadline when unset.
const DefaultProgressDeadline = 10 * time.Minute

// Reconciler runs the stage machine for one kind of Rollout.
type Reconciler struct {
	Client client.Client
	// APIReader reads past the cache where a decision must not rest on a
	// cache that may lag (the kept revisions); Client when nil.
	APIReader     client.Reader
	Recorder      record.EventRecorder
	ClusterScoped bool
	// Clock is the wall clock when nil.
	Clock clock.PassiveClock
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

func (r *Reconciler) newRollout() revision.Rollout {
	if r.ClusterScoped {
		o := &rolloutsv1alpha1.ClusterRollout{}
		return revision.Rollout{Obj: o, Spec: &o.Spec, Status: &o.Status, Kind: "ClusterRollout"}
	}
	o := &rolloutsv1alpha1.Rollout{}
	return revision.Rollout{Obj: o, Spec: &o.Spec, Status: &o.Status, Kind: "Rollout"}
}

// binding is one claimed template: its binding, content hash and targets.
type binding struct {
	obj      client.Object
	spec     *workv1alpha2.ResourceBindingSpec
	hash     string
	template *unstructured.Unstructured
	stamp    revision.Stamp
	stamped  bool
	workName string
}

// Reconcile takes in a new revision when a template's content changed,
// runs one step of the stage machine, writes the status once, then stamps
// the bindings with the revision that took in their content.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	result, err := r.reconcile(ctx, req)
	return retry.Quietly(result, err)
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ro := r.newRollout()
	if err := r.Client.Get(ctx, req.NamespacedName, ro.Obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ro.Obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	before := ro.Obj.DeepCopyObject().(client.Object)
	now := r.now()
	policyKind := "PropagationPolicy"
	var policy client.Object = &policyv1alpha1.PropagationPolicy{}
	if r.ClusterScoped {
		policyKind, policy = "ClusterPropagationPolicy", &policyv1alpha1.ClusterPropagationPolicy{}
	}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ro.Obj.GetNamespace(), Name: ro.Spec.PolicyRef.Name}, policy)
	if apierrors.IsNotFound(err) {
		msg := fmt.Sprintf("%s %s does not exist: nothing is rolled out; create it or fix spec.policyRef.name", policyKind, policyName(ro.Obj.GetNamespace(), ro.Spec.PolicyRef.Name))
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonPolicyNotFound, msg, nil)
		return ctrl.Result{}, r.writeStatus(ctx, ro, before)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if gov, ok, err := revision.Governing(ctx, r.Client, policyKind, ro.Obj.GetNamespace(), ro.Spec.PolicyRef.Name); err != nil {
		return ctrl.Result{}, err
	} else if ok && gov.UID() != ro.UID() {
		msg := fmt.Sprintf("%s governs %s %s already; this one releases nothing: delete one of them", gov, policyKind, ro.Spec.PolicyRef.Name)
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonInvalidSpec, msg, nil)
		return ctrl.Result{}, r.writeStatus(ctx, ro, before)
	}

	bindings, err := r.bindingsOf(ctx, policyKind, ro.Obj.GetNamespace(), ro.Spec.PolicyRef.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A new revision when the content differs from what the current one
	// kept: not from the stamps, which a cache may show a write behind.
	kept, err := r.keptHashes(ctx, ro, ro.Status.Revision)
	if err != nil {
		return ctrl.Result{}, err
	}
	placed := map[string]bool{}
	changed := len(kept) != len(bindings)
	for _, b := range bindings {
		if ro.Status.Revision == 0 && meta.FindStatusCondition(bindingConditions(b.obj), workkeys.ConditionScheduled) == nil {
			// The first revision is released everywhere at once; it is
			// taken in once every binding is placed, so a template placed
			// a moment later is not staged as if it were a change.
			return ctrl.Result{}, nil
		}
		for _, t := range b.spec.Clusters {
			placed[t.Name] = true
		}
		if kept[revision.BindingKey(b.obj)] != b.hash {
			changed = true
		}
	}

	prior := *ro.Status.DeepCopy()
	in := Input{Now: now, Revision: prior.Revision, Prior: prior, ProgressDeadline: DefaultProgressDeadline,
		MaxFailures: ro.Spec.MaxFailures, Rollback: ro.Spec.OnFailure == rolloutsv1alpha1.OnFailureRollback}
	var events []Event
	if len(bindings) > 0 && (changed || prior.Revision == 0) {
		// The revision's content is kept before anything names it.
		if err := r.keep(ctx, ro, prior.Revision+1, bindings); err != nil {
			return ctrl.Result{}, err
		}
		in.Revision = prior.Revision + 1
		in.Initial = prior.Revision == 0
		in.Prior.CurrentStage, in.Prior.SoakStartedAt = "", nil
		if !in.Initial {
			events = append(events, Event{Reason: rolloutsv1alpha1.EventReasonRevisionStarted,
				Message: fmt.Sprintf("revision %d: the content of the templates changed; it starts from the first stage", in.Revision)})
		}
	}
	if d := ro.Spec.ProgressDeadline; d != nil {
		in.ProgressDeadline = d.Duration
	}
	if v, ok := ro.Obj.GetAnnotations()[policykeys.SuspendedAnnotation]; ok {
		in.Paused = v
		if in.Paused == "" {
			in.Paused = "true"
		}
	}
	if v := ro.Obj.GetAnnotations()[rolloutsv1alpha1.AbortAnnotation]; v != "" && v == strconv.FormatInt(in.Revision, 10) {
		in.Aborted = true
	}
	if v := ro.Obj.GetAnnotations()[rolloutsv1alpha1.PromoteAnnotation]; v != "" {
		if rev, stage, ok := strings.Cut(v, "/"); ok && rev == strconv.FormatInt(in.Revision, 10) {
			in.Promoted = stage
		}
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, err
	}
	var gateRecheck time.Duration
	in.Stages, gateRecheck, err = r.stages(ctx, ro, clusters.Items, placed, now)
	if err != nil {
		msg := err.Error()
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonInvalidSpec, msg, nil)
		return ctrl.Result{}, r.writeStatus(ctx, ro, before)
	}
	if in.Healthy, in.HeldElsewhere, err = r.health(ctx, bindings); err != nil {
		return ctrl.Result{}, err
	}

	if in.Revision == 0 {
		msg := fmt.Sprintf("%s %s claims no template yet (or its bindings are not placed yet): nothing to roll out",
			policyKind, policyName(ro.Obj.GetNamespace(), ro.Spec.PolicyRef.Name))
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonNoRevision, msg, nil)
		return ctrl.Result{}, r.writeStatus(ctx, ro, before)
	}
	out := Step(in)
	events = append(events, out.Events...)
	out.Status.Conditions = ro.Status.Conditions
	out.Status.ObservedGeneration = ro.Obj.GetGeneration()
	*ro.Status = out.Status
	r.setOutcome(ro, out, in.Paused)
	if err := r.writeStatus(ctx, ro, before); err != nil {
		return ctrl.Result{}, err
	}
	for _, e := range events {
		if e.Reason == rolloutsv1alpha1.EventReasonClusterFailed {
			metrics.RolloutFailures.WithLabelValues(ro.Kind, ro.Obj.GetNamespace(), ro.Obj.GetName()).Inc()
		}
		typ := corev1.EventTypeNormal
		if e.Warning {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Event(ro.Obj, typ, e.Reason, e.Message)
	}
	// The stamps go on after the status that names the revision: a binding
	// whose stamp names a revision the status has not released anywhere
	// holds, whatever order the binding controller sees them in.
	for _, b := range bindings {
		stamp := revision.Stamp{RolloutUID: string(ro.UID()), Revision: in.Revision, Hash: b.hash}
		if b.stamped && b.stamp.RolloutUID == stamp.RolloutUID && b.stamp.Hash == b.hash {
			continue
		}
		patch := client.MergeFrom(b.obj.DeepCopyObject().(client.Object))
		a := b.obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[rolloutsv1alpha1.RevisionAnnotation] = stamp.String()
		b.obj.SetAnnotations(a)
		if err := r.Client.Patch(ctx, b.obj, patch); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.prune(ctx, ro, in.Revision); err != nil {
		return ctrl.Result{}, err
	}
	result := ctrl.Result{RequeueAfter: out.RequeueAfter}
	if gateRecheck > 0 && (result.RequeueAfter == 0 || gateRecheck < result.RequeueAfter) {
		result.RequeueAfter = gateRecheck
	}
	ctrl.LoggerFrom(ctx).V(1).Info("rollout step", "revision", in.Revision, "stage", out.Status.CurrentStage,
		"completed", out.Completed, "failed", out.Failed, "waiting", out.Waiting)
	return result, nil
}

func bindingConditions(o client.Object) []metav1.Condition {
	switch b := o.(type) {
	case *workv1alpha2.ResourceBinding:
		return b.Status.Conditions
	case *workv1alpha2.ClusterResourceBinding:
		return b.Status.Conditions
	}
	return nil
}

func policyName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// bindingsOf lists the bindings the policy claims, with each template's
// content hash and the stamp each carries.
func (r *Reconciler) bindingsOf(ctx context.Context, policyKind, namespace, name string) ([]binding, error) {
	claimed, err := revision.ClaimedBy(ctx, r.Client, policyKind, namespace, name)
	if err != nil {
		return nil, err
	}
	out := make([]binding, 0, len(claimed))
	for _, c := range claimed {
		res := c.Spec.Resource
		b := binding{obj: c.Binding, spec: c.Spec, hash: c.Hash, template: c.Template,
			workName: names.GenerateWorkName(res.Kind, res.Name, res.Namespace)}
		b.stamp, b.stamped = revision.ParseStamp(c.Binding.GetAnnotations()[rolloutsv1alpha1.RevisionAnnotation])
		out = append(out, b)
	}
	return out, nil
}

// keptHashes are the content hashes revision rev kept, by binding; nil
// when it kept none (no revision yet, or its history is gone).
func (r *Reconciler) keptHashes(ctx context.Context, ro revision.Rollout, rev int64) (map[string]string, error) {
	if rev == 0 {
		return nil, nil
	}
	cr := &appsv1.ControllerRevision{}
	key := ro.HistoryKey(rev)
	err := r.Client.Get(ctx, key, cr)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if cr.Labels[rolloutsv1alpha1.RolloutUIDLabel] != string(ro.UID()) {
		return nil, nil
	}
	return revision.Hashes(cr)
}

// DefaultRevisionHistoryLimit is spec.revisionHistoryLimit when unset.
const DefaultRevisionHistoryLimit = 10

// keep stores the content of revision rev as a ControllerRevision (its
// history namespace made when missing), owned by the Rollout when both
// share a namespace.
func (r *Reconciler) keep(ctx context.Context, ro revision.Rollout, rev int64, bindings []binding) error {
	var content revision.Content
	for _, b := range bindings {
		content.Templates = append(content.Templates, revision.Template{Binding: revision.BindingKey(b.obj), Hash: b.hash,
			Object: revision.Kept(b.template)})
	}
	cr, err := revision.NewHistory(ro, rev, content)
	if err != nil {
		return err
	}
	if cr.Namespace == ro.Obj.GetNamespace() {
		cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: rolloutsv1alpha1.GroupVersion.String(), Kind: ro.Kind,
			Name: ro.Obj.GetName(), UID: ro.UID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	} else {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cr.Namespace}}
		if err := r.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s for the history of %s: %w", cr.Namespace, ro, err)
		}
	}
	err = r.Client.Create(ctx, cr)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	// Kept already: by a step whose status write was refused, by a Rollout
	// of the same name before this one, or by a step this cache has not
	// seen the status of. Its content is immutable, and must not change
	// under a revision the status may name already.
	old := &appsv1.ControllerRevision{}
	if err := r.fresh().Get(ctx, client.ObjectKeyFromObject(cr), old); err != nil {
		return err
	}
	oldHashes, err := revision.Hashes(old)
	if err == nil && old.Labels[rolloutsv1alpha1.RolloutUIDLabel] == string(ro.UID()) && maps.Equal(oldHashes, hashesOf(content)) {
		return nil
	}
	stored := r.newRollout()
	if err := r.fresh().Get(ctx, client.ObjectKeyFromObject(ro.Obj), stored.Obj); err != nil {
		return err
	}
	if stored.UID() == ro.UID() && stored.Status.Revision >= rev {
		// The stored status names this revision already: the cache is
		// behind; the next step reads what was kept.
		return apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, cr.Name,
			fmt.Errorf("%s is at revision %d already", ro, stored.Status.Revision))
	}
	// Named by no status: left by a step whose status write was refused,
	// or by a Rollout of the same name before this one. Replace it.
	if err := r.Client.Delete(ctx, old, client.Preconditions{UID: &old.UID}); client.IgnoreNotFound(err) != nil {
		return err
	}
	return r.Client.Create(ctx, cr)
}

func hashesOf(c revision.Content) map[string]string {
	out := make(map[string]string, len(c.Templates))
	for _, t := range c.Templates {
		out[t.Binding] = t.Hash
	}
	return out
}

// fresh reads past the cache; the cache when no APIReader is set.
func (r *Reconciler) fresh() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// prune deletes the kept revisions beyond spec.revisionHistoryLimit.
func (r *Reconciler) prune(ctx context.Context, ro revision.Rollout, current int64) error {
	limit := int64(DefaultRevisionHistoryLimit)
	if l := ro.Spec.RevisionHistoryLimit; l != nil {
		limit = int64(*l)
	}
	list := &appsv1.ControllerRevisionList{}
	ns := ro.HistoryKey(current).Namespace
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{rolloutsv1alpha1.RolloutUIDLabel: string(ro.UID())}); err != nil {
		return err
	}
	for i := range list.Items {
		cr := &list.Items[i]
		if cr.Revision > current-limit {
			continue
		}
		if err := r.Client.Delete(ctx, cr); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// health says, per placed cluster, whether every template is healthy there
// at its current content: the cluster's Work carries that content, is not
// held, is applied at its generation, and the member object is healthy by
// Karmada's interpreter (a Deployment updated and available at its
// generation, a Job complete; other kinds once applied).
func (r *Reconciler) health(ctx context.Context, bindings []binding) (map[string]bool, map[string]string, error) {
	healthy := map[string]bool{}
	unhealthy := map[string]bool{}
	heldElsewhere := map[string]string{}
	for _, b := range bindings {
		for _, t := range b.spec.Clusters {
			w := &workv1alpha1.Work{}
			err := r.Client.Get(ctx, client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(t.Name), Name: b.workName}, w)
			if apierrors.IsNotFound(err) {
				unhealthy[t.Name] = true
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			if reason := w.Annotations[workkeys.HoldReasonAnnotation]; ptr.Deref(w.Spec.SuspendDispatching, false) &&
				reason != "" && reason != workkeys.ReasonRolloutStage && heldElsewhere[t.Name] == "" {
				heldElsewhere[t.Name] = w.Annotations[workkeys.HoldMessageAnnotation]
			}
			if workHealthy(w, b.hash) {
				healthy[t.Name] = true
			} else {
				unhealthy[t.Name] = true
			}
		}
	}
	for c := range unhealthy {
		delete(healthy, c)
	}
	return healthy, heldElsewhere, nil
}

func workHealthy(w *workv1alpha1.Work, hash string) bool {
	if w.Annotations[workkeys.TemplateHashAnnotation] != hash || ptr.Deref(w.Spec.SuspendDispatching, false) ||
		!w.DeletionTimestamp.IsZero() {
		return false
	}
	applied := meta.FindStatusCondition(w.Status.Conditions, workkeys.ConditionApplied)
	if applied == nil || applied.Status != metav1.ConditionTrue || applied.ObservedGeneration != w.Generation {
		return false
	}
	if len(w.Status.ManifestStatuses) == 0 {
		return false
	}
	for _, ms := range w.Status.ManifestStatuses {
		if ms.Health != workv1alpha1.ResourceHealthy {
			return false
		}
	}
	return true
}

// stages resolves spec.stages against the placed clusters: by name, or by
// the labels of their Cluster objects (clusters an earlier stage took are
// not taken again); the placed clusters no stage names form the last stage,
// "remaining". It also judges each stage's gates by the clock and returns
// when the first of them changes by itself.
func (r *Reconciler) stages(ctx context.Context, ro revision.Rollout, clusters []clusterv1alpha1.Cluster,
	placed map[string]bool, now time.Time) ([]Stage, time.Duration, error) {
	taken := map[string]bool{}
	var out []Stage
	var recheck time.Duration
	for _, s := range ro.Spec.Stages {
		st := Stage{Name: s.Name, Pause: s.Pause}
		if s.MinSuccessTime != nil {
			st.MinSuccessTime = s.MinSuccessTime.Duration
		}
		var selector labels.Selector
		if s.ClusterSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(s.ClusterSelector)
			if err != nil {
				return nil, 0, fmt.Errorf("spec.stages[%s].clusterSelector of %s cannot be read: %v; fix it", s.Name, ro, err)
			}
			selector = sel
		}
		for _, c := range clusters {
			if !placed[c.Name] || taken[c.Name] {
				continue
			}
			if slices.Contains(s.Clusters, c.Name) || selector != nil && selector.Matches(labels.Set(c.Labels)) {
				st.Clusters = append(st.Clusters, c.Name)
				taken[c.Name] = true
			}
		}
		slices.Sort(st.Clusters)
		st.MaxConcurrency = max(scaled(s.MaxConcurrency, len(st.Clusters), len(st.Clusters), true), 1)
		hold, next, err := r.gateHold(ctx, ro, s)
		if err != nil {
			return nil, 0, err
		}
		st.GateHold = hold
		if !next.IsZero() {
			if d := next.Sub(now); d > 0 && (recheck == 0 || d < recheck) {
				recheck = d
			}
		}
		out = append(out, st)
	}
	rest := Stage{Name: rolloutsv1alpha1.RemainingStage}
	for c := range placed {
		if !taken[c] {
			rest.Clusters = append(rest.Clusters, c)
		}
	}
	if len(rest.Clusters) > 0 {
		slices.Sort(rest.Clusters)
		rest.MaxConcurrency = len(rest.Clusters)
		out = append(out, rest)
	}
	return out, recheck, nil
}

// gateHold judges the stage's gates by the clock: "" when all are open,
// else what holds, fail safe (a missing gate holds).
func (r *Reconciler) gateHold(ctx context.Context, ro revision.Rollout, s rolloutsv1alpha1.Stage) (string, time.Time, error) {
	var msgs []string
	var next time.Time
	for _, ref := range s.Gates {
		ns, name, ok := strings.Cut(ref, "/")
		if !ok {
			ns, name = ro.Obj.GetNamespace(), ref
		}
		if ns == "" {
			msgs = append(msgs, fmt.Sprintf("gate '%s' needs a namespace in a ClusterRollout: write namespace/%s", ref, ref))
			continue
		}
		g := &gatingv1alpha1.Gate{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, g)
		if apierrors.IsNotFound(err) {
			msgs = append(msgs, fmt.Sprintf("gate '%s/%s' does not exist: create it, or remove it from the stage's gates", ns, name))
			continue
		}
		if err != nil {
			return "", time.Time{}, err
		}
		e := gatestate.At(g, r.now())
		if e.NextChange != nil && (next.IsZero() || e.NextChange.Before(next)) {
			next = *e.NextChange
		}
		if !e.Open {
			msgs = append(msgs, fmt.Sprintf("waiting approval, gate '%s/%s' is closed (%s)", ns, name, e.Message))
		}
	}
	return strings.Join(msgs, "; "), next, nil
}

// setOutcome records the step's conditions.
func (r *Reconciler) setOutcome(ro revision.Rollout, out Output, paused string) {
	switch {
	case out.Aborted:
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonAborted, out.Waiting, &out)
	case out.Failed != "":
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonStageFailed, out.Waiting, &out)
	case out.Completed:
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonRolloutCompleted,
			fmt.Sprintf("revision %d reached every stage", out.Status.Revision), &out)
	default:
		r.setConditions(ro, metav1.ConditionTrue, out.WaitingReason, out.Waiting, &out)
	}
	pausedCond := metav1.Condition{Type: rolloutsv1alpha1.ConditionPaused, Status: metav1.ConditionFalse,
		Reason: rolloutsv1alpha1.ReasonNotPaused, Message: "nothing pauses the rollout"}
	switch {
	case paused != "":
		why := ""
		if paused != "true" {
			why = fmt.Sprintf(" (%q)", paused)
		}
		pausedCond = metav1.Condition{Type: rolloutsv1alpha1.ConditionPaused, Status: metav1.ConditionTrue,
			Reason: rolloutsv1alpha1.ReasonSuspended, Message: fmt.Sprintf("paused by annotation %s%s: nothing new is released and the soak clock stops; `federator rollout resume %s` continues",
				policykeys.SuspendedAnnotation, why, ro.Obj.GetName())}
	case out.WaitingReason == rolloutsv1alpha1.ReasonWaitingForPromotion:
		pausedCond = metav1.Condition{Type: rolloutsv1alpha1.ConditionPaused, Status: metav1.ConditionTrue,
			Reason: rolloutsv1alpha1.ReasonWaitingForPromotion, Message: out.Waiting}
	}
	conditions.Set(&ro.Status.Conditions, ro.Obj.GetGeneration(), pausedCond)
}

// setConditions sets Progressing (status and reason as given), and
// Completed and Failed from out (both False when out is nil).
func (r *Reconciler) setConditions(ro revision.Rollout, progressing metav1.ConditionStatus, reason, msg string, out *Output) {
	gen := ro.Obj.GetGeneration()
	ro.Status.ObservedGeneration = gen
	conditions.Set(&ro.Status.Conditions, gen, metav1.Condition{Type: rolloutsv1alpha1.ConditionProgressing,
		Status: progressing, Reason: reason, Message: msg})
	completed := metav1.Condition{Type: rolloutsv1alpha1.ConditionCompleted, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
	failed := metav1.Condition{Type: rolloutsv1alpha1.ConditionFailed, Status: metav1.ConditionFalse,
		Reason: rolloutsv1alpha1.ReasonNoFailure, Message: "no stage failed more than maxFailures"}
	if out != nil && out.Completed {
		completed.Status = metav1.ConditionTrue
	}
	if out != nil && out.Failed != "" {
		failed = metav1.Condition{Type: rolloutsv1alpha1.ConditionFailed, Status: metav1.ConditionTrue,
			Reason: rolloutsv1alpha1.ReasonStageFailed, Message: msg}
	}
	if reason == rolloutsv1alpha1.ReasonPolicyNotFound || reason == rolloutsv1alpha1.ReasonInvalidSpec || reason == rolloutsv1alpha1.ReasonAborted {
		failed = metav1.Condition{Type: rolloutsv1alpha1.ConditionFailed, Status: metav1.ConditionTrue, Reason: reason, Message: msg}
	}
	conditions.Set(&ro.Status.Conditions, gen, completed)
	conditions.Set(&ro.Status.Conditions, gen, failed)
}

func (r *Reconciler) writeStatus(ctx context.Context, ro revision.Rollout, before client.Object) error {
	_, err := conditions.PatchStatus(ctx, r.Client, before, ro.Obj, true)
	return err
}
