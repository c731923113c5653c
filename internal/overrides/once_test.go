package overrides

import (
	"context"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
)

// Rendering one template for many clusters through ListedOnce asks the
// API server for each kind of override policy once, and renders exactly
// what the client itself renders.
func TestListedOnceListsEachKindOnce(t *testing.T) {
	op := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pin"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
				Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
					Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "0.9"}}},
			}},
		}}
	lists := map[string]int{}
	objs := []client.Object{op}
	for _, m := range []string{"member1", "member2", "member3"} {
		objs = append(objs, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: m}})
	}
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			switch list.(type) {
			case *policyv1alpha1.OverridePolicyList:
				lists["OverridePolicy"]++
			case *policyv1alpha1.ClusterOverridePolicyList:
				lists["ClusterOverridePolicy"]++
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	template := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"namespace": "shop", "name": "web"},
			"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1"}}}}}}}
	}
	image := func(m *unstructured.Unstructured) string {
		cs, _, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers")
		return cs[0].(map[string]any)["image"].(string)
	}
	once := Karmada(ListedOnce(c))
	direct := Karmada(c)
	for _, cluster := range []string{"member1", "member2", "member3", "member2"} {
		a, b := template(), template()
		if _, err := once(a, cluster); err != nil {
			t.Fatal(err)
		}
		if _, err := direct(b, cluster); err != nil {
			t.Fatal(err)
		}
		if image(a) != image(b) {
			t.Errorf("%s: rendered %s through ListedOnce, %s directly", cluster, image(a), image(b))
		}
		if want := map[bool]string{true: "nginx:0.9", false: "nginx:1"}[cluster == "member2"]; image(a) != want {
			t.Errorf("%s: rendered %s, want %s", cluster, image(a), want)
		}
	}
	// 4 renders directly, and 1 through ListedOnce, for each kind.
	for kind, n := range lists {
		if n != 5 {
			t.Errorf("%s listed %d times, want 5 (4 direct renders, 1 through ListedOnce)", kind, n)
		}
	}
	if len(lists) != 2 {
		t.Errorf("lists %v, want both kinds listed", lists)
	}
}
