package detector

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
)

// benchTemplate is a Deployment as the detector's informer holds it: only its
// metadata matters to Match, so it carries realistic metadata and a small spec.
func benchTemplate() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":              "checkout",
			"namespace":         "shop",
			"uid":               "0b4f5e3a-1111-2222-3333-444455556666",
			"resourceVersion":   "81234",
			"generation":        int64(7),
			"creationTimestamp": "2026-01-12T10:00:00Z",
			"labels": map[string]any{
				"app.kubernetes.io/name":       "checkout",
				"app.kubernetes.io/part-of":    "shop",
				"app.kubernetes.io/managed-by": "helm",
				"team":                         "payments",
				"tier":                         "backend",
			},
			"annotations": map[string]any{
				"deployment.kubernetes.io/revision": "3",
				"meta.helm.sh/release-name":         "checkout",
			},
		},
		"spec": map[string]any{"replicas": int64(6)},
	}}
	return u
}

// benchSelector returns the i-th policy's resource selectors, cycling through
// the three kinds of selector a namespace's policies hold: by name (a
// Deployment and its Service), by labelSelector (matchLabels, or
// matchExpressions with In and Exists), and by kind only (ConfigMaps and
// Services, sometimes all Deployments). Most select other workloads, so the
// template is checked against every policy: about one policy in twenty
// selects it (for 1000 policies: 7 by name, 14 by labels, 34 by kind).
func benchSelector(i int) []policyv1alpha1.ResourceSelector {
	deployment := func() policyv1alpha1.ResourceSelector {
		return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	}
	switch i % 3 {
	case 0: // name
		rs := deployment()
		rs.Name = fmt.Sprintf("svc-%d", i)
		if i%50 == 0 {
			rs.Name = "checkout"
		}
		service := policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Service", Name: rs.Name}
		return []policyv1alpha1.ResourceSelector{rs, service}
	case 1: // labelSelector
		rs := deployment()
		if i%2 == 0 {
			app := fmt.Sprintf("svc-%d", i)
			if i%25 == 1 {
				app = "checkout"
			}
			rs.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{
				"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "shop"}}
		} else {
			team := fmt.Sprintf("team-%d", i)
			if i%25 == 1 {
				team = "payments"
			}
			rs.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{team, "platform"}},
				{Key: "tier", Operator: metav1.LabelSelectorOpExists},
			}}
		}
		return []policyv1alpha1.ResourceSelector{rs}
	default: // kind only
		if i%10 == 2 {
			return []policyv1alpha1.ResourceSelector{deployment()}
		}
		return []policyv1alpha1.ResourceSelector{
			{APIVersion: "v1", Kind: "ConfigMap"},
			{APIVersion: "v1", Kind: "Service"},
		}
	}
}

func benchPolicies(namespace string, n int) []policyv1alpha1.PropagationPolicy {
	pps := make([]policyv1alpha1.PropagationPolicy, n)
	for i := range pps {
		pps[i] = policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("pp-%04d", i)},
			Spec:       policyv1alpha1.PropagationSpec{ResourceSelectors: benchSelector(i)},
		}
		if i%7 == 0 {
			pps[i].Spec.Priority = ptrTo(int32(i % 3))
		}
	}
	return pps
}

func benchClusterPolicies(n int) []policyv1alpha1.ClusterPropagationPolicy {
	cpps := make([]policyv1alpha1.ClusterPropagationPolicy, n)
	for i := range cpps {
		selectors := benchSelector(i)
		for j := range selectors {
			if i%2 == 0 {
				selectors[j].Namespace = "shop"
			}
		}
		cpps[i] = policyv1alpha1.ClusterPropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cpp-%04d", i)},
			Spec:       policyv1alpha1.PropagationSpec{ResourceSelectors: selectors},
		}
	}
	return cpps
}

func ptrTo[T any](v T) *T { return &v }

// BenchmarkMatch measures which policy claims one Deployment template, with
// 10, 100 and 1000 PropagationPolicies in its namespace and 100
// ClusterPropagationPolicies.
//   - by=pp: some PropagationPolicies select the template, so Match stops
//     before the ClusterPropagationPolicies (the common case).
//   - by=cpp: none of the namespace's policies selects it (the template's
//     labels differ), so Match also goes through the ClusterPropagationPolicies.
func BenchmarkMatch(b *testing.B) {
	cpps := benchClusterPolicies(100)
	for _, n := range []int{10, 100, 1000} {
		pps := benchPolicies("shop", n)
		for _, tc := range []struct {
			by       string
			template func() *unstructured.Unstructured
		}{
			{"pp", benchTemplate},
			{"cpp", func() *unstructured.Unstructured {
				// Another name, other labels: only the namespace's kind-only
				// Deployment policies could select it, so drop those.
				u := benchTemplate()
				u.SetName("ledger")
				u.SetLabels(map[string]string{"app.kubernetes.io/name": "ledger", "team": "finance", "tier": "backend"})
				return u
			}},
		} {
			b.Run(fmt.Sprintf("pps=%d/by=%s", n, tc.by), func(b *testing.B) {
				template := tc.template()
				policies := pps
				if tc.by == "cpp" {
					policies = withoutKindOnlyDeployments(pps)
				}
				// Not timed: check the input is claimed the way the case says.
				claim, ok := Match(template, policies, cpps)
				if !ok {
					b.Fatal("template is not claimed")
				}
				if got := claim.ClusterPropagationPolicy != nil; got != (tc.by == "cpp") {
					b.Fatalf("claimed by %s, want a %s", claim.Key(), tc.by)
				}
				for b.Loop() {
					_, _ = Match(template, policies, cpps)
				}
			})
		}
	}
}

// withoutKindOnlyDeployments replaces the selectors that take every
// Deployment of the namespace with ones for StatefulSets, keeping the count.
func withoutKindOnlyDeployments(pps []policyv1alpha1.PropagationPolicy) []policyv1alpha1.PropagationPolicy {
	out := make([]policyv1alpha1.PropagationPolicy, len(pps))
	for i := range pps {
		out[i] = *pps[i].DeepCopy()
		for j := range out[i].Spec.ResourceSelectors {
			rs := &out[i].Spec.ResourceSelectors[j]
			if rs.Kind == "Deployment" && rs.Name == "" && rs.LabelSelector == nil {
				rs.Kind = "StatefulSet"
			}
		}
	}
	return out
}
