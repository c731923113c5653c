package work

import policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

// Policy kinds ClaimingPolicy names.
const (
	PropagationPolicyKind        = "PropagationPolicy"
	ClusterPropagationPolicyKind = "ClusterPropagationPolicy"
)

// ClaimingPolicy reads which policy claims a template from the annotations
// the detector records on the template, its binding and its Works
// (Karmada's keys): PropagationPolicyKind with its namespace and name,
// ClusterPropagationPolicyKind with its name, or kind "" when none is
// recorded. It is the one reading of those keys.
func ClaimingPolicy(annotations map[string]string) (kind, namespace, name string) {
	if name := annotations[policyv1alpha1.PropagationPolicyNameAnnotation]; name != "" {
		return PropagationPolicyKind, annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation], name
	}
	if name := annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation]; name != "" {
		return ClusterPropagationPolicyKind, "", name
	}
	return "", "", ""
}
