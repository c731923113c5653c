package detector

import (
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Affects reports whether a change to policy (a *PropagationPolicy or a
// *ClusterPropagationPolicy, as it is now or as it was) can change the
// claim or the binding of template: the policy selects the template, or
// the template records a claim by the policy. Any other template keeps
// its claim, since claims are sticky; a policy that preempts selects the
// templates it takes, so they are among those affected.
// Given the policy both before and after an update, this covers templates
// it stops selecting and claims that are still on their way to the cache.
func Affects(policy client.Object, template *unstructured.Unstructured) bool {
	a := template.GetAnnotations()
	switch p := policy.(type) {
	case *policyv1alpha1.PropagationPolicy:
		if template.GetNamespace() != p.Namespace {
			return false
		}
		return a[policyv1alpha1.PropagationPolicyNameAnnotation] == p.Name &&
			a[policyv1alpha1.PropagationPolicyNamespaceAnnotation] == p.Namespace ||
			SelectorsMatch(template, p.Spec.ResourceSelectors)
	case *policyv1alpha1.ClusterPropagationPolicy:
		return a[policyv1alpha1.ClusterPropagationPolicyAnnotation] == p.Name ||
			SelectorsMatch(template, p.Spec.ResourceSelectors)
	}
	return false
}
