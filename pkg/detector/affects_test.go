package detector

import (
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestAffects(t *testing.T) {
	deployment := func(ns, name string, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(map[string]string{"app": name})
		u.SetAnnotations(annotations)
		return u
	}
	selecting := func(name string) []policyv1alpha1.ResourceSelector {
		return []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}}
	}
	pp := func(ns, name string, selectors []policyv1alpha1.ResourceSelector) client.Object {
		return &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selectors}}
	}
	cpp := func(name string, selectors []policyv1alpha1.ResourceSelector) client.Object {
		return &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selectors}}
	}
	claimedByPP := map[string]string{
		policyv1alpha1.PropagationPolicyNamespaceAnnotation: "shop", policyv1alpha1.PropagationPolicyNameAnnotation: "web"}
	claimedByCPP := map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: "everything"}

	cases := []struct {
		name     string
		policy   client.Object
		template *unstructured.Unstructured
		want     bool
	}{
		{"PP selects the template", pp("shop", "web", selecting("web")), deployment("shop", "web", nil), true},
		{"PP selects another template", pp("shop", "web", selecting("api")), deployment("shop", "web", nil), false},
		{"PP of another namespace", pp("bank", "web", selecting("web")), deployment("shop", "web", nil), false},
		{"PP no longer selects what it claims", pp("shop", "web", selecting("api")), deployment("shop", "web", claimedByPP), true},
		{"same name, other namespace's claim", pp("shop", "web", selecting("api")),
			deployment("shop", "web", map[string]string{
				policyv1alpha1.PropagationPolicyNamespaceAnnotation: "bank", policyv1alpha1.PropagationPolicyNameAnnotation: "web"}), false},
		{"PP does not select a template a CPP claims", pp("shop", "web", selecting("api")), deployment("shop", "web", claimedByCPP), false},
		{"CPP selects a namespaced template", cpp("everything", selecting("web")), deployment("shop", "web", nil), true},
		{"CPP claims it", cpp("everything", selecting("api")), deployment("shop", "web", claimedByCPP), true},
		{"another CPP", cpp("other", selecting("api")), deployment("shop", "web", claimedByCPP), false},
		{"not a policy", deployment("shop", "web", nil), deployment("shop", "web", nil), false},
	}
	for _, c := range cases {
		if got := Affects(c.policy, c.template); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
