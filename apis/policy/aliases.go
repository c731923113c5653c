package policy

import (
	"fmt"
	"slices"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The suspension proposal (Karmada's docs/proposals/dispatch-suspension)
// spells spec.suspension's fields suspendDispatching and
// suspendDispatchingOnClusters; Karmada released them as dispatching and
// dispatchingOnClusters. The hub's CRDs accept both spellings, so a policy
// written from the proposal is never pruned into "no suspension", and the
// two are one setting. Karmada's Go types know only the released spelling:
// a typed read drops the aliases, so code that decides what a policy
// suspends folds them back in from the object as stored (FoldAliases).
const (
	// AliasSuspendDispatching is the proposal's spelling of
	// spec.suspension.dispatching.
	AliasSuspendDispatching = "suspendDispatching"
	// AliasSuspendDispatchingOnClusters is the proposal's spelling of
	// spec.suspension.dispatchingOnClusters.
	AliasSuspendDispatchingOnClusters = "suspendDispatchingOnClusters"
)

// FoldAliases returns spec with the proposal's spellings, read from stored
// (the policy as the API server stores it), folded into Karmada's. The fold
// fails safe: suspension of every cluster if either spelling asks for it,
// and the union of both cluster lists. (The hub's admission policy refuses
// a policy whose spellings disagree, so the union only matters on a hub
// without it.) spec itself is not changed; without aliases it is returned
// as is.
func FoldAliases(spec *policyv1alpha1.PropagationSpec, stored *unstructured.Unstructured) *policyv1alpha1.PropagationSpec {
	all, hasAll, _ := unstructured.NestedBool(stored.Object, "spec", "suspension", AliasSuspendDispatching)
	list, hasList, _ := unstructured.NestedStringSlice(stored.Object, "spec", "suspension", AliasSuspendDispatchingOnClusters, "clusterNames")
	_, hasListField, _ := unstructured.NestedMap(stored.Object, "spec", "suspension", AliasSuspendDispatchingOnClusters)
	if !hasAll && !hasList && !hasListField {
		return spec
	}
	folded := spec.DeepCopy()
	if folded.Suspension == nil {
		folded.Suspension = &policyv1alpha1.Suspension{}
	}
	s := folded.Suspension
	if hasAll && (s.Dispatching == nil || (all && !*s.Dispatching)) {
		s.Dispatching = &all
	}
	if hasList || hasListField {
		if s.DispatchingOnClusters == nil {
			s.DispatchingOnClusters = &policyv1alpha1.SuspendClusters{}
		}
		for _, name := range list {
			if !slices.Contains(s.DispatchingOnClusters.ClusterNames, name) {
				s.DispatchingOnClusters.ClusterNames = append(s.DispatchingOnClusters.ClusterNames, name)
			}
		}
	}
	return folded
}

// StoredSpec is the spec of a PropagationPolicy or ClusterPropagationPolicy
// read unstructured (as stored), with the proposal's spellings folded in.
func StoredSpec(stored *unstructured.Unstructured) (*policyv1alpha1.PropagationSpec, error) {
	spec := &policyv1alpha1.PropagationSpec{}
	if raw, ok := stored.Object["spec"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, spec); err != nil {
			return nil, fmt.Errorf("%s %s: reading its spec: %w", stored.GetKind(), stored.GetName(), err)
		}
	}
	return FoldAliases(spec, stored), nil
}
