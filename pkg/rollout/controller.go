package rollout

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/overrides"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/internal/revision"
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
	// Override renders what each cluster gets of a template; when nil,
	// overrides.Karmada over a ListedOnce of Client, one per step.
	Override overrides.Func
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

// binding is one claimed template (its binding, content hash, targets and
// what each target gets), with the stamp it carries and its Works' name.
type binding struct {
	revision.Claimed
	stamp    revision.Stamp
	stamped  bool
	workName string
}

// hashFor is the content hash of what cluster gets; "" when its overrides
// cannot be applied (it is healthy at no content until they can).
func (b binding) hashFor(cluster string) string {
	if r, ok := b.Clusters[cluster]; ok && r.Err == nil {
		return r.Hash
	}
	return ""
}

// stampFor is the stamp that says rev took in what b's clusters get now.
func (b binding) stampFor(uid string, rev int64) revision.Stamp {
	s := revision.Stamp{RolloutUID: uid, Revision: rev, Hash: b.Hash}
	for c, r := range b.Clusters {
		if r.Err == nil && r.Hash != b.Hash {
			if s.Clusters == nil {
				s.Clusters = map[string]string{}
			}
			s.Clusters[c] = r.Hash
		}
	}
	return s
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
	kept, err := r.keptTemplates(ctx, ro, ro.Status.Revision)
	if err != nil {
		return ctrl.Result{}, err
	}
	placed := map[string]bool{}
	claimed := make([]revision.Claimed, 0, len(bindings))
	for _, b := range bindings {
		if ro.Status.Revision == 0 && meta.FindStatusCondition(bindingConditions(b.Binding), workkeys.ConditionScheduled) == nil {
			// The first revision is released everywhere at once; it is
			// taken in once every binding is placed, so a template placed
			// a moment later is not staged as if it were a change.
			return ctrl.Result{}, nil
		}
		for _, t := range b.Spec.Clusters {
			placed[t.Name] = true
		}
		claimed = append(claimed, b.Claimed)
	}
	changes := revision.Changes(kept, claimed)

	prior := *ro.Status.DeepCopy()
	in := Input{Now: now, Revision: prior.Revision, Prior: prior, ProgressDeadline: DefaultProgressDeadline,
		MaxFailures: ro.Spec.MaxFailures, Rollback: ro.Spec.OnFailure == rolloutsv1alpha1.OnFailureRollback}
	var events []Event
	if len(bindings) > 0 && (len(changes) > 0 || prior.Revision == 0) {
		// The revision's content is kept before anything names it.
		if err := r.keep(ctx, ro, prior.Revision+1, bindings); err != nil {
			return ctrl.Result{}, err
		}
		in.Revision = prior.Revision + 1
		in.Initial = prior.Revision == 0
		in.Prior.CurrentStage, in.Prior.SoakStartedAt = "", nil
		if !in.Initial {
			// What changed, said: a revision nobody edited for is then a
			// cache or a render to look at, not a mystery.
			events = append(events, Event{Reason: rolloutsv1alpha1.EventReasonRevisionStarted,
				Message: fmt.Sprintf("revision %d: what the templates send changed (a template, or an override that applies to it); it starts from the first stage; %s",
					in.Revision, revision.Summary(changes))})
			said := make([]string, len(changes))
			for i, c := range changes {
				said[i] = c.String()
			}
			ctrl.LoggerFrom(ctx).V(1).Info("revision started", "revision", in.Revision, "from", prior.Revision, "changes", said)
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
	if due := Due(in); len(due) > 0 {
		in.Measurements = r.measure(ctx, ro, in, due, bindings)
	}

	if in.Revision == 0 {
		msg := fmt.Sprintf("%s %s claims no template yet (or its bindings are not placed yet): nothing to roll out",
			policyKind, policyName(ro.Obj.GetNamespace(), ro.Spec.PolicyRef.Name))
		r.setConditions(ro, metav1.ConditionFalse, rolloutsv1alpha1.ReasonNoRevision, msg, nil)
		return ctrl.Result{}, r.writeStatus(ctx, ro, before)
	}
	out := Step(in)
	if again, err := r.confirmStageGates(ctx, ro, &in, out, now); err != nil {
		return ctrl.Result{}, err
	} else if again {
		out = Step(in)
	}
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
		stamp := b.stampFor(string(ro.UID()), in.Revision)
		if b.stamped && b.stamp.RolloutUID == stamp.RolloutUID &&
			b.stamp.Hash == stamp.Hash && maps.Equal(b.stamp.Clusters, stamp.Clusters) {
			continue
		}
		patch := client.MergeFrom(b.Binding.DeepCopyObject().(client.Object))
		a := b.Binding.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[rolloutsv1alpha1.RevisionAnnotation] = stamp.String()
		b.Binding.SetAnnotations(a)
		if err := r.Client.Patch(ctx, b.Binding, patch); client.IgnoreNotFound(err) != nil {
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
	override := r.Override
	if override == nil {
		// One read of the overrides (and of the Clusters they select on)
		// for every cluster of the step: an edit landing in the cache
		// between two clusters' renders would keep a revision with the
		// edit on some clusters only, and start another for the rest.
		override = overrides.Karmada(overrides.ListedOnce(r.Client))
	}
	claimed, err := revision.ClaimedBy(ctx, r.Client, override, policyKind, namespace, name)
	if err != nil {
		return nil, err
	}
	out := make([]binding, 0, len(claimed))
	for _, c := range claimed {
		res := c.Spec.Resource
		b := binding{Claimed: c,
			workName: names.GenerateWorkName(res.Kind, res.Name, res.Namespace)}
		b.stamp, b.stamped = revision.ParseStamp(c.Binding.GetAnnotations()[rolloutsv1alpha1.RevisionAnnotation])
		out = append(out, b)
	}
	return out, nil
}
