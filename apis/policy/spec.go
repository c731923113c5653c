package policy

import (
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// SpecOf is the spec of a PropagationPolicy or ClusterPropagationPolicy
// (the two kinds share it), so code that serves both reads it one way; an
// empty spec for any other object.
func SpecOf(obj runtime.Object) *policyv1alpha1.PropagationSpec {
	switch p := obj.(type) {
	case *policyv1alpha1.PropagationPolicy:
		return &p.Spec
	case *policyv1alpha1.ClusterPropagationPolicy:
		return &p.Spec
	}
	return &policyv1alpha1.PropagationSpec{}
}

// PermanentIDLabel is the label that carries a policy's permanent ID, on
// the policy (Karmada's webhook sets it) and on what it claims: the
// templates and their bindings. "" for any other object.
func PermanentIDLabel(policy any) string {
	switch policy.(type) {
	case *policyv1alpha1.PropagationPolicy:
		return policyv1alpha1.PropagationPolicyPermanentIDLabel
	case *policyv1alpha1.ClusterPropagationPolicy:
		return policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel
	}
	return ""
}

// PermanentID is a policy's permanent ID: its permanent-id label, which
// Karmada's webhook sets, or its UID where no webhook did. A policy
// deleted and created again under the same name has another.
func PermanentID(policy metav1.Object) string {
	if id := policy.GetLabels()[PermanentIDLabel(policy)]; id != "" {
		return id
	}
	return string(policy.GetUID())
}
