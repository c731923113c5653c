package detector

import (
	"context"
	"encoding/json"
	"fmt"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/pkg/hold"
)

// What held in a policy outlives it. Karmada's webhook puts a finalizer on
// every policy; the detector puts the same one, and before it lets a
// deleted policy go it writes what held in it onto each binding it
// claimed: its last spec.suspension and its annotations that decide holds
// (workkeys.PolicyHoldsAnnotation). A suspension written a moment before a
// GitOps prune, which no controller had taken in yet, still holds until a
// policy claims the template again.

// policyFinalizer is the finalizer of policy's kind.
func policyFinalizer(policy client.Object) string {
	if _, cpp := policy.(*policyv1alpha1.ClusterPropagationPolicy); cpp {
		return policykeys.ClusterPropagationPolicyFinalizer
	}
	return policykeys.PropagationPolicyFinalizer
}

// holdOn adds to a policy what Karmada's policy webhook adds: the
// finalizer, and the permanent-id label (here the policy's UID, the ID
// its bindings already carry), which Karmada's e2e suite and tools select
// bindings by. One patch for both, only where one is missing.
func (p *policyReconciler) holdOn(ctx context.Context, policy client.Object) error {
	label := policykeys.PermanentIDLabel(policy)
	if controllerutil.ContainsFinalizer(policy, policyFinalizer(policy)) && policy.GetLabels()[label] != "" {
		return nil
	}
	patch := client.MergeFromWithOptions(policy.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(policy, policyFinalizer(policy))
	if policy.GetLabels()[label] == "" {
		labels := policy.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[label] = policykeys.PermanentID(policy)
		policy.SetLabels(labels)
	}
	return p.d.client.Patch(ctx, policy, patch)
}

// letGo carries what held in a policy being deleted onto the bindings it
// claimed, then removes the finalizer.
func (p *policyReconciler) letGo(ctx context.Context, policy client.Object, stored *unstructured.Unstructured) error {
	if !controllerutil.ContainsFinalizer(policy, policyFinalizer(policy)) {
		return nil
	}
	spec := policykeys.FoldAliases(policykeys.SpecOf(policy), stored)
	var suspension *workv1alpha2.Suspension
	if spec.Suspension != nil {
		suspension = &workv1alpha2.Suspension{Suspension: *spec.Suspension.DeepCopy()}
	}
	var holds string
	if h := hold.Annotations(policy.GetAnnotations()); len(h) > 0 {
		raw, err := json.Marshal(h)
		if err != nil {
			return err
		}
		holds = string(raw)
	}
	bindings, err := p.claimedBindings(ctx, policy)
	if err != nil {
		return err
	}
	for _, b := range bindings {
		if err := carryHolds(ctx, p.d.client, b, suspension, holds); err != nil {
			return fmt.Errorf("carrying the holds of %s %s onto %s %s: %w", policyGVK(policy).Kind,
				client.ObjectKeyFromObject(policy), b.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(b), err)
		}
	}
	patch := client.MergeFromWithOptions(policy.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(policy, policyFinalizer(policy))
	return p.d.client.Patch(ctx, policy, patch)
}

// carryHolds writes suspension and holds onto binding b (an update with its
// resourceVersion: a conflict retries with the binding as it is now).
func carryHolds(ctx context.Context, c client.Client, b client.Object, suspension *workv1alpha2.Suspension, holds string) error {
	spec := bindingSpec(b)
	annotations := b.GetAnnotations()
	if equality.Semantic.DeepEqual(spec.Suspension, suspension) && annotations[workkeys.PolicyHoldsAnnotation] == holds {
		return nil
	}
	spec.Suspension = suspension
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, workkeys.PolicyHoldsAnnotation)
	if holds != "" {
		annotations[workkeys.PolicyHoldsAnnotation] = holds
	}
	b.SetAnnotations(annotations)
	return c.Update(ctx, b)
}

// claimedBindings are the bindings whose claim names policy.
func (p *policyReconciler) claimedBindings(ctx context.Context, policy client.Object) ([]client.Object, error) {
	var out []client.Object
	rbs := &workv1alpha2.ResourceBindingList{}
	var opts []client.ListOption
	if policy.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(policy.GetNamespace()))
	}
	if err := p.d.client.List(ctx, rbs, opts...); err != nil {
		return nil, err
	}
	for i := range rbs.Items {
		if claimedBy(&rbs.Items[i], policy) {
			out = append(out, &rbs.Items[i])
		}
	}
	if policy.GetNamespace() != "" {
		return out, nil
	}
	crbs := &workv1alpha2.ClusterResourceBindingList{}
	if err := p.d.client.List(ctx, crbs); err != nil {
		return nil, err
	}
	for i := range crbs.Items {
		if claimedBy(&crbs.Items[i], policy) {
			out = append(out, &crbs.Items[i])
		}
	}
	return out, nil
}

// claimedBy says whether binding b's claim annotations name policy.
func claimedBy(b client.Object, policy client.Object) bool {
	a := b.GetAnnotations()
	if policy.GetNamespace() == "" {
		return a[policyv1alpha1.ClusterPropagationPolicyAnnotation] == policy.GetName()
	}
	return a[policyv1alpha1.PropagationPolicyNamespaceAnnotation] == policy.GetNamespace() &&
		a[policyv1alpha1.PropagationPolicyNameAnnotation] == policy.GetName()
}

// deletionStarted passes the update that marks a policy deleted: its
// finalizer is the detector's to remove.
var deletionStarted = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
	},
}
