package detector

import (
	"strings"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// SuspensionSummary says where a binding's suspension holds dispatching:
// "every cluster", "clusters member2, member3", or "" when nowhere.
func SuspensionSummary(s *workv1alpha2.Suspension) string {
	switch {
	case s == nil:
		return ""
	case ptr.Deref(s.Dispatching, false):
		return "every cluster"
	case s.DispatchingOnClusters != nil && len(s.DispatchingOnClusters.ClusterNames) > 0:
		return "clusters " + strings.Join(s.DispatchingOnClusters.ClusterNames, ", ")
	}
	return ""
}

// suspendedReason is the reason a person gave in the suspended annotation
// (the template's wins over the policy's), "" when none or just "true".
func suspendedReason(template *unstructured.Unstructured, claim Claim) string {
	for _, a := range []map[string]string{template.GetAnnotations(), claimAnnotations(claim)} {
		if v, ok := a[policykeys.SuspendedAnnotation]; ok {
			if v == "true" {
				return ""
			}
			return v
		}
	}
	return ""
}

func claimAnnotations(claim Claim) map[string]string {
	switch {
	case claim.PropagationPolicy != nil:
		return claim.PropagationPolicy.Annotations
	case claim.ClusterPropagationPolicy != nil:
		return claim.ClusterPropagationPolicy.Annotations
	}
	return nil
}
