package binding

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/overrides"
	"github.com/federator-dev/federator/internal/revision"
	"github.com/federator-dev/federator/pkg/hold"
)

// What holds each cluster of a binding: the hold input read from the template,
// the policy, the gates and the Rollout, and the decisions made from it.

// holdInput gathers what pkg/hold decides from: the template, the policy
// that claims it (from the cache; zero when it is gone), the suspension the
// binding carries from that policy, and the gates the template, the policy
// and the target Clusters list; and the Rollout that governs the policy, if
// one does.
func (r *Reconciler) holdInput(ctx context.Context, b bindingview.View, tpl *unstructured.Unstructured,
	clusters []clusterv1alpha1.Cluster, targets []string, override overrides.Func) (hold.Input, *revision.Rollout, error) {
	in := hold.Input{
		Template: hold.Object{Kind: tpl.GetKind(), Namespace: tpl.GetNamespace(), Name: tpl.GetName(),
			Annotations: tpl.GetAnnotations()},
	}
	if b.Spec.Suspension != nil {
		in.Suspension = &b.Spec.Suspension.Suspension
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
	// Recorded before the gates are judged: a Gate that changes after
	// this read brings the binding again (gateWaiters).
	listed := templateGates(in.Template)
	r.waiters.set(client.ObjectKeyFromObject(b.Obj), listed)
	var err error
	if in.TemplateGates, err = r.resolveGates(ctx, listed); err != nil {
		return in, nil, err
	}
	if err := r.frozenTargets(ctx, r.Client, &in, targets); err != nil {
		return in, nil, err
	}
	kind, ns, name := b.PolicyRef()
	var policy client.Object
	switch kind {
	case "PropagationPolicy":
		policy = &policyv1alpha1.PropagationPolicy{}
	case "ClusterPropagationPolicy":
		policy = &policyv1alpha1.ClusterPropagationPolicy{}
	default:
		return in, nil, nil
	}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, policy)
	if apierrors.IsNotFound(err) {
		// Like Karmada, a binding outlives its policy; it keeps the
		// suspension it carries, and what else held in the policy when it
		// went (the detector wrote both before it let the policy go).
		return in, nil, r.carriedPolicyHolds(ctx, b, &in, kind, ns, name)
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
	governing, err := r.rolloutInput(ctx, &in, b, tpl, kind, ns, name, targets, override)
	return in, governing, err
}

// carriedPolicyHolds adds to in the hold annotations the binding carries
// from its deleted policy (workkeys.PolicyHoldsAnnotation). One that cannot
// be read holds every target: it was written to hold.
func (r *Reconciler) carriedPolicyHolds(ctx context.Context, b bindingview.View, in *hold.Input, kind, ns, name string) error {
	raw, ok := b.Obj.GetAnnotations()[workkeys.PolicyHoldsAnnotation]
	if !ok {
		return nil
	}
	annotations := map[string]string{}
	if err := json.Unmarshal([]byte(raw), &annotations); err != nil {
		annotations = map[string]string{policykeys.SuspendedAnnotation: fmt.Sprintf(
			"annotation %s on the binding cannot be read (%v); it held what the deleted policy held", workkeys.PolicyHoldsAnnotation, err)}
	}
	in.Policy = hold.Object{Kind: kind, Namespace: ns, Name: name, Annotations: annotations}
	if v, ok := annotations[gatingv1alpha1.GatesAnnotation]; ok {
		gates, err := r.resolveGates(ctx, hold.ParseGates(v, ns, in.Policy.String()))
		if err != nil {
			return err
		}
		in.PolicyGates = gates
	}
	return nil
}

// rolloutInput adds the Rollout that governs the policy, if one does: a
// target is released only when the Rollout took in what the target gets
// now, the template with the target's overrides (the binding's stamp names
// it), and released that revision to the target. That content's hash goes
// onto the target's Work (workkeys.TemplateHashAnnotation), so the rollout
// controller judges each cluster's health at it. override is the pass's
// (passOverride): the Work's manifest is rendered from the same reads.
func (r *Reconciler) rolloutInput(ctx context.Context, in *hold.Input, b bindingview.View, tpl *unstructured.Unstructured,
	kind, ns, name string, targets []string, override overrides.Func) (*revision.Rollout, error) {
	ro, ok, err := revision.Governing(ctx, r.Client, kind, ns, name)
	if err != nil || !ok {
		return nil, err
	}
	hash, err := revision.Hash(tpl)
	if err != nil {
		return nil, err
	}
	stamp := b.Obj.GetAnnotations()[rolloutsv1alpha1.RevisionAnnotation]
	s, stamped := revision.ParseStamp(stamp)
	stamped = stamped && s.RolloutUID == string(ro.UID())
	in.Rollout = &hold.Rollout{Name: ro.String(), Released: map[string]bool{}, Waiting: map[string]string{}, Hashes: map[string]string{}}
	for _, t := range targets {
		rendered := revision.RenderFor(tpl, hash, t, override)
		if rendered.Err != nil {
			in.Rollout.Waiting[t] = fmt.Sprintf("what it gets cannot be built (%v); it keeps what it has until the override is fixed", rendered.Err)
			continue
		}
		in.Rollout.Hashes[t] = rendered.Hash
		switch {
		case ro.Released(stamp, rendered.Hash, t):
			in.Rollout.Released[t] = true
		case !stamped || s.HashFor(t) != rendered.Hash:
			in.Rollout.Waiting[t] = "the rollout has not taken in what this cluster gets now (the template with its overrides) yet"
		default:
			in.Rollout.Waiting[t] = ro.Waiting(t)
		}
	}
	return &ro, nil
}

// passOverride renders what one cluster gets, for one pass over a
// binding: overrides.Karmada over reads kept for the pass
// (overrides.ListedOnce), so the render a release is decided from and the
// render the Work carries see the same OverridePolicies and Cluster, even
// when an edit lands between them; Override when set.
func (r *Reconciler) passOverride() overrides.Func {
	if r.Override != nil {
		return r.Override
	}
	return overrides.Karmada(overrides.ListedOnce(r.Client))
}

// keptTemplate is what a cluster got of a template at a revision.
type keptTemplate struct {
	template *unstructured.Unstructured
	hash     string
	// rendered: the overrides the cluster had then are in template
	// already; overridden records them on the Work. False for a revision
	// kept before renders were kept per cluster: today's overrides apply.
	rendered bool
	applied  map[string]string
	// origin names the revision and the Rollout: "revision 3 of Rollout
	// shop/web" (RolledBackAnnotation).
	origin string
}

// overridden applies nothing more (the overrides are in the kept render)
// and records the overrides it had.
func (k keptTemplate) overridden(*unstructured.Unstructured, string) (map[string]string, error) {
	return k.applied, nil
}

// rolledBack finds, for each target the governing Rollout rolled back, what
// the revision it went back to kept for it: the template as it was, with
// the overrides the target had then. That target is released with exactly
// that. A revision no longer kept, or one that did not hold the template,
// keeps the target held and says why.
func (r *Reconciler) rolledBack(ctx context.Context, b bindingview.View, tpl *unstructured.Unstructured, in *hold.Input, ro *revision.Rollout,
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
		keptTpl, found, err := revision.FromHistory(cr, revision.BindingKey(b.Obj))
		if err != nil {
			return nil, err
		}
		if !found {
			in.Rollout.Waiting[t] = fmt.Sprintf("rolled back to revision %d, which did not hold this template; it keeps what it has", rev)
			continue
		}
		kept, hash, applied, rendered := keptTpl.RenderedFor(t)
		kept = kept.DeepCopy()
		// The template as it is now, with the content it had then.
		kept.SetUID(tpl.GetUID())
		kept.SetResourceVersion(tpl.GetResourceVersion())
		out[t] = keptTemplate{template: kept, hash: hash, rendered: rendered, applied: applied,
			origin: fmt.Sprintf("revision %d of %s", rev, ro.String())}
		in.Rollout.Released[t] = true
	}
	return out, nil
}

// setApproved records on the binding whether the gates it waits for are
// open: Approved=False with the first gate hold's message while one holds,
// True once all are open, and no condition when nothing lists a gate.
func setApproved(b bindingview.View, in hold.Input, decisions map[string]hold.Decision) {
	gated := len(in.TemplateGates) > 0 || len(in.PolicyGates) > 0
	for cluster := range decisions {
		gated = gated || len(in.ClusterGates[cluster]) > 0
	}
	if !gated {
		meta.RemoveStatusCondition(&b.Status.Conditions, workkeys.ConditionApproved)
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
				conditions.Set(&b.Status.Conditions, bindingview.Unstamped, approved)
				return
			}
		}
	}
	conditions.Set(&b.Status.Conditions, bindingview.Unstamped, approved)
}
