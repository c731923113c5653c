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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/holdwrites"
	"github.com/federator-dev/federator/internal/works"
	"github.com/federator-dev/federator/pkg/hold"
)

// policyGone reports whether the binding names a claiming policy that no
// longer exists (or is being deleted), and that policy's key for a person.
func (r *Reconciler) policyGone(ctx context.Context, b bindingview.View) (bool, string, error) {
	kind, ns, name := b.PolicyRef()
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
	if id := b.Obj.GetLabels()[policykeys.PermanentIDLabel(policy)]; id != "" && id != policykeys.PermanentID(policy) {
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
func (r *Reconciler) unclaimed(ctx context.Context, b bindingview.View, tpl *unstructured.Unstructured, policy string) (string, error) {
	held, holdErr := r.holdUnclaimed(ctx, b, tpl)
	before := b.Snapshot()
	message := fmt.Sprintf("%s, which claimed the template, is gone: its Works keep the holds and the deletion delay "+
		"they last had and no longer follow the template, until a policy claims it again", policy)
	if len(held) > 0 {
		message += fmt.Sprintf("; held since, by what holds now: %s", strings.Join(held, ", "))
	}
	conditions.Set(&b.Status.Conditions, bindingview.Unstamped, metav1.Condition{Type: workkeys.ConditionWorksSynced,
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
func (r *Reconciler) holdUnclaimed(ctx context.Context, b bindingview.View, tpl *unstructured.Unstructured) ([]string, error) {
	existing, err := bindingview.WorksOf(ctx, r.Client, b)
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
		if _, err := works.EnsureWork(holdwrites.Hold(ctx), r.Client, desired, b.IDLabel()); err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", cluster, err))
			continue
		}
		held = append(held, cluster)
	}
	return held, errors.Join(errs...)
}
