package detector

import (
	"context"
	"slices"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
)

// A Lazy policy's change reaches a template's binding only when the
// template next changes, as in Karmada.
func TestLazyActivation(t *testing.T) {
	deploymentKey := Key{GroupVersionKind: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespace: "shop", Name: "web"}
	newPolicy := func(lazy bool, clusters ...string) *policyv1alpha1.PropagationPolicy {
		p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "pp-uid"},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}}}}
		if lazy {
			p.Spec.ActivationPreference = policyv1alpha1.LazyActivation
		}
		return p
	}
	template := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace("shop")
		u.SetName("web")
		u.SetUID("tpl-uid")
		u.SetResourceVersion("1")
		_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "replicas")
		return u
	}
	cases := []struct {
		name         string
		lazy         bool
		bound        bool // a binding exists, from the policy's earlier placement
		byLazyPolicy bool
		wantClusters []string // nil: no binding
	}{
		{"a lazy policy's change leaves the binding as it was", true, true, true, []string{"member1", "member2", "member3"}},
		{"the template's own change brings the lazy policy's change", true, true, false, []string{"member1", "member2"}},
		{"a lazy policy binds nothing until the template changes", true, false, true, nil},
		{"an eager policy's change reaches the binding at once", false, true, false, []string{"member1", "member2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tpl := template()
			objs := []client.Object{newPolicy(tc.lazy, "member1", "member2")}
			if tc.bound {
				b, _ := Binding(tpl, Claim{PropagationPolicy: newPolicy(tc.lazy, "member1", "member2", "member3")}, nil)
				objs = append(objs, b)
			}
			dep := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tpl.Object, dep); err != nil {
				t.Fatal(err)
			}
			objs = append(objs, dep)
			c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(objs...).
				WithIndex(&policyv1alpha1.PropagationPolicy{}, kindIndex, selectedKinds).
				WithIndex(&policyv1alpha1.ClusterPropagationPolicy{}, kindIndex, selectedKinds).Build()
			d := &Reconciler{client: c, recorder: record.NewFakeRecorder(10)}
			key := deploymentKey
			key.ByLazyPolicy = tc.byLazyPolicy
			if _, err := d.Reconcile(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			rb := &workv1alpha2.ResourceBinding{}
			err := c.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web-deployment"}, rb)
			if tc.wantClusters == nil {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("binding: err = %v, want none", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := rb.Spec.Placement.ClusterAffinity.ClusterNames; !slices.Equal(got, tc.wantClusters) {
				t.Errorf("binding placement = %v, want %v", got, tc.wantClusters)
			}
		})
	}
}
