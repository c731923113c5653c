package binding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/holdwrites"
	"github.com/federator-dev/federator/internal/works"
	"github.com/federator-dev/federator/pkg/hold"
)

// policyGone reports whether the binding names a claiming policy that no
// longer exists (or is being deleted), and that policy's key for a person.
func (r *Reconciler) policyGone(ctx context.Context, b view) (bool, string, error) {
	kind, ns, name := b.policyRef()
	policy := emptyPolicy(kind)
	if policy == nil {
		return false, "", nil
	}
	key := kind + " " + client.ObjectKey{Namespace: ns, Name: name}.String()
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, policy)
	if apierrors.IsNotFound(err) {
		return true, key, nil
	}
	if err != nil {
		return false, key, err
	}
	// A policy of that name created again is another one until the
	// detector records its claim on the binding: the binding's placement
	// and suspension are still the deleted one's (found by the chaos
	// checker: a member the new policy leaves out was sent the template,
	// from the placement the deleted policy had).
	if id := b.obj.GetLabels()[policykeys.PermanentIDLabel(policy)]; id != "" && id != policykeys.PermanentID(policy) {
		return true, key, nil
	}
	return !policy.GetDeletionTimestamp().IsZero(), key, nil
}

func emptyPolicy(kind string) client.Object {
	switch kind {
	case "PropagationPolicy":
		return &policyv1alpha1.PropagationPolicy{}
	case "ClusterPropagationPolicy":
		return &policyv1alpha1.ClusterPropagationPolicy{}
	}
	return nil
}

// unclaimed records that the binding's policy is gone and lets the Works
// only take on holds: they keep the manifests, the holds and the deletion
// delay they last had. Deciding without the policy would drop its holds
// (its suspended annotations, its gates) and its deletion delay, so a
// policy pruned and applied again by GitOps, or `kubectl replace --force`,
// would send every held version out in between, and a template pruned with
// its policy would be deleted from members at once. Like Karmada, a
// template no policy claims is not propagated further; the policy that
// claims it next decides afresh. But a hold written meanwhile (on the
// template, on a Cluster's gates) holds at once: a Work released before the
// policy went, whose version has not reached its member yet (the member
// was down, the controller restarting), is held rather than sent.
func (r *Reconciler) unclaimed(ctx context.Context, b view, tpl *unstructured.Unstructured, policy string) (string, error) {
	held, holdErr := r.holdUnclaimed(ctx, b, tpl)
	before := b.snapshot()
	message := fmt.Sprintf("%s, which claimed the template, is gone: its Works keep the holds and the deletion delay "+
		"they last had and no longer follow the template, until a policy claims it again", policy)
	if len(held) > 0 {
		message += fmt.Sprintf("; held since, by what holds now: %s", strings.Join(held, ", "))
	}
	conditions.Set(&b.status.Conditions, unstamped, metav1.Condition{Type: workkeys.ConditionWorksSynced,
		Status: metav1.ConditionTrue, Reason: workkeys.ReasonUnclaimed, Message: message})
	outcome := "policy " + policy + " gone: Works kept as last written"
	if len(held) > 0 {
		outcome += ", held since: " + strings.Join(held, ", ")
	}
	_, outcome, err := r.finish(ctx, b, before, nil, outcome)
	return outcome, errors.Join(holdErr, err)
}

// holdUnclaimed holds each released Work of an unclaimed binding that
// what is left to decide from holds now (the template's annotations, the
// suspension the binding carries, the Clusters' gates), manifest
// unchanged, and returns the clusters it held. Nothing is released.
func (r *Reconciler) holdUnclaimed(ctx context.Context, b view, tpl *unstructured.Unstructured) ([]string, error) {
	existing, err := worksOf(ctx, r.Client, b)
	if err != nil || len(existing) == 0 {
		return nil, err
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	byCluster := map[string]*workv1alpha1.Work{}
	var targets []string
	for i := range existing {
		cluster, err := names.GetClusterName(existing[i].Namespace)
		if err != nil || ptr.Deref(existing[i].Spec.SuspendDispatching, false) || !existing[i].DeletionTimestamp.IsZero() {
			continue
		}
		byCluster[cluster] = &existing[i]
		targets = append(targets, cluster)
	}
	if len(targets) == 0 {
		return nil, nil
	}
	slices.Sort(targets)
	in, _, err := r.holdInput(ctx, b, tpl, clusters.Items, targets, r.passOverride())
	if err != nil {
		return nil, err
	}
	checks := r.checks()
	decisions := hold.Decide(in, targets, checks)
	var held []string
	var errs []error
	for _, cluster := range targets {
		d := decisions[cluster]
		if !d.Held() {
			continue
		}
		desired := byCluster[cluster].DeepCopy()
		if desired.Annotations == nil {
			desired.Annotations = map[string]string{}
		}
		holdWork(desired, d)
		if _, err := works.EnsureWork(holdwrites.Hold(ctx), r.Client, desired, b.idLabel()); err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", cluster, err))
			continue
		}
		held = append(held, cluster)
	}
	return held, errors.Join(errs...)
}

// confirmReleases re-decides, from the claiming policy, the template, the
// gates, the Clusters' gate annotations and the Freezes as the API server
// has them now
// (their annotations, the policy's own spec.suspension, each gate judged
// by the clock; a template whose content moved on is a conflict,
// confirmTemplate), every cluster
// whose Work this pass would release with a new version (a new Work, a
// held one released, or a changed manifest), and holds those that the
// fresh policy holds. The binding carries the policy's spec.suspension only
// once the detector has copied it there, and the cached policy and binding
// come from different watches, which can be seconds apart under load (or
// after a restart, while the detector works through every template): a
// suspension written just before a template change may be in neither when
// the binding brings the change. A hold either read sees holds. It costs
// one read of the policy and one of the template only when something new
// would go out; changed decisions are written into desired.
func (r *Reconciler) confirmReleases(ctx context.Context, b view, tpl *unstructured.Unstructured, in hold.Input, checks []hold.Check,
	decisions map[string]hold.Decision, desired []clusterWork, last map[string]*workv1alpha1.Work) error {
	var releasing []string
	for _, d := range desired {
		if decisions[d.cluster].Held() {
			continue
		}
		stored := last[d.work.Namespace]
		if stored == nil || ptr.Deref(stored.Spec.SuspendDispatching, false) ||
			!works.UpToDate(stored, d.work.Spec, stored.Annotations) {
			releasing = append(releasing, d.cluster)
		}
	}
	if len(releasing) == 0 || r.APIReader == nil {
		return nil
	}
	freshTpl, err := r.confirmTemplate(ctx, b, tpl)
	if err != nil {
		return err
	}
	freshIn := in
	freshIn.Template.Annotations = freshTpl.GetAnnotations()
	kind, ns, name := b.policyRef()
	if err := r.frozenTargets(ctx, r.APIReader, &freshIn, releasing); err != nil {
		return err
	}
	if emptyPolicy(kind) == nil {
		if err := r.freshClusterGates(ctx, &freshIn, releasing); err != nil {
			return err
		}
		holdWhatFreshHolds(freshIn, releasing, checks, decisions, desired)
		return nil
	}
	policy := &unstructured.Unstructured{}
	policy.SetGroupVersionKind(schema.GroupVersionKind{Group: policyv1alpha1.GroupName, Version: "v1alpha1", Kind: kind})
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, policy); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone since the cache read: the next pass, once the cache has
			// it, keeps the Works as they are.
			return cacheBehind(policyv1alpha1.GroupName, kind, name, "the policy is gone from the API server but not yet from the cache")
		}
		return err
	}
	if !policy.GetDeletionTimestamp().IsZero() {
		// Deleted, held by its finalizer until the detector lets go: it
		// claims nothing new, and the Works keep what they last had until
		// a policy claims the template again.
		return cacheBehind(policyv1alpha1.GroupName, kind, name, "the policy is being deleted, which the cache has not seen yet")
	}
	spec := &policyv1alpha1.PropagationSpec{}
	if raw, ok := policy.Object["spec"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, spec); err != nil {
			return fmt.Errorf("reading %s %s/%s: %w", kind, ns, name, err)
		}
	}
	spec = policykeys.FoldAliases(spec, policy)
	freshIn.Policy.Annotations = policy.GetAnnotations()
	freshIn.Suspension = spec.Suspension
	freshIn.PolicyGates = nil
	if v, ok := policy.GetAnnotations()[gatingv1alpha1.GatesAnnotation]; ok {
		gates, err := r.resolveGatesFrom(ctx, r.APIReader, hold.ParseGates(v, ns, in.Policy.String()))
		if err != nil {
			return err
		}
		freshIn.PolicyGates = gates
	}
	if err := r.freshClusterGates(ctx, &freshIn, releasing); err != nil {
		return err
	}
	holdWhatFreshHolds(freshIn, releasing, checks, decisions, desired)
	return nil
}

// freshClusterGates replaces in.ClusterGates of the releasing clusters with
// the gates their Clusters list on the API server, each judged from the
// Gate the API server has: a gate closed, or listed on a Cluster, just
// before a template change holds that change even while the Gate or
// Cluster informer lags the template's. One listing of the Clusters'
// metadata (not their status, which carries each member's APIs) and one
// read per gate listed, only when something new would go out.
func (r *Reconciler) freshClusterGates(ctx context.Context, in *hold.Input, releasing []string) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(clusterv1alpha1.SchemeGroupVersion.WithKind("ClusterList"))
	if err := r.APIReader.List(ctx, list); err != nil {
		return err
	}
	annotations := make(map[string]map[string]string, len(list.Items))
	for i := range list.Items {
		annotations[list.Items[i].Name] = list.Items[i].Annotations
	}
	gates := make(map[string][]hold.Gate, len(in.ClusterGates))
	for c, g := range in.ClusterGates {
		gates[c] = g
	}
	for _, c := range releasing {
		delete(gates, c)
		v, ok := annotations[c][gatingv1alpha1.GatesAnnotation]
		if !ok {
			continue
		}
		resolved, err := r.resolveGatesFrom(ctx, r.APIReader, hold.ParseGates(v, "", "Cluster "+c))
		if err != nil {
			return err
		}
		gates[c] = resolved
	}
	in.ClusterGates = gates
	return nil
}

// holdWhatFreshHolds decides releasing afresh from freshIn and holds, in
// decisions and desired, each cluster that the fresh decision holds.
func holdWhatFreshHolds(freshIn hold.Input, releasing []string, checks []hold.Check,
	decisions map[string]hold.Decision, desired []clusterWork) {
	fresh := hold.Decide(freshIn, releasing, checks)
	for i := range desired {
		d := &desired[i]
		if f := fresh[d.cluster]; f.Held() && !decisions[d.cluster].Held() {
			decisions[d.cluster] = f
			holdWork(d.work, f)
		}
	}
}

// confirmTemplate reads the binding's template from the API server before
// a release, and returns a conflict error (the pass is retried once the
// cache has caught up) when its content changed since the cache read it:
// a generation moved on, or, for kinds without one (a ConfigMap), any new
// version. Right after the hub's API server comes back, the template
// informer may miss a change for seconds, and nothing else records it (the
// detector, whose cache is behind too, has not written it into the
// binding): the release would send a version the user has replaced.
func (r *Reconciler) confirmTemplate(ctx context.Context, b view, cached *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	fresh := templateObject(b)
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(fresh), fresh); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, cacheBehind(fresh.GroupVersionKind().Group, fresh.GetKind(), fresh.GetName(),
				"the template is gone from the API server but not yet from the cache")
		}
		return nil, err
	}
	if fresh.GetUID() != cached.GetUID() || fresh.GetGeneration() != cached.GetGeneration() ||
		(fresh.GetGeneration() == 0 && fresh.GetResourceVersion() != cached.GetResourceVersion()) {
		return nil, cacheBehind(fresh.GroupVersionKind().Group, fresh.GetKind(), fresh.GetName(),
			fmt.Sprintf("the template changed since the cache read it (resourceVersion %s, cache %s)",
				fresh.GetResourceVersion(), cached.GetResourceVersion()))
	}
	return fresh, nil
}

// holdWork makes work carry decision's hold.
func holdWork(work *workv1alpha1.Work, decision hold.Decision) {
	work.Spec.SuspendDispatching = ptr.To(true)
	work.Annotations[workkeys.HoldReasonAnnotation] = decision.Reason()
	work.Annotations[workkeys.HoldMessageAnnotation] = decision.Message()
	delete(work.Annotations, workkeys.HoldGatesAnnotation)
	if gates := decision.Gates(); len(gates) > 0 {
		work.Annotations[workkeys.HoldGatesAnnotation] = strings.Join(gates, ",")
	}
}

// cacheBehind is the error of a pass that found the API server ahead of
// its cache (why says how): a conflict, retried quietly (internal/retry)
// until the cache has caught up.
func cacheBehind(group, kind, name, why string) error {
	return apierrors.NewConflict(schema.GroupResource{Group: group, Resource: kind}, name, errors.New(why))
}
