package binding

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
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
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/works"
	"github.com/federator-dev/federator/pkg/hold"
)

// confirmReleases re-decides, from the claiming policy, the template, the
// gates (those the template, the policy and the Clusters list) and the
// Freezes as the API server has them now (their annotations, the policy's
// own spec.suspension, each gate judged by the clock; a template whose
// content moved on is a conflict, confirmTemplate), every cluster whose
// Work this pass would release with a new version (a new Work, a
// held one released, or a changed manifest), and holds those that the
// fresh policy holds. The binding carries the policy's spec.suspension only
// once the detector has copied it there, and the cached policy and binding
// come from different watches, which can be seconds apart under load (or
// after a restart, while the detector works through every template): a
// suspension written just before a template change may be in neither when
// the binding brings the change. A hold either read sees holds. It costs
// one read of the policy and one of the template only when something new
// would go out; changed decisions are written into desired.
func (r *Reconciler) confirmReleases(ctx context.Context, b bindingview.View, tpl *unstructured.Unstructured, in hold.Input, checks []hold.Check,
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
	if freshIn.TemplateGates, err = r.resolveGatesFrom(ctx, r.APIReader, templateGates(freshIn.Template)); err != nil {
		return err
	}
	kind, ns, name := b.PolicyRef()
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
func (r *Reconciler) confirmTemplate(ctx context.Context, b bindingview.View, cached *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	fresh := bindingview.TemplateObject(b)
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
