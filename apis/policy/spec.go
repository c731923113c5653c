package policy

import (
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
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
