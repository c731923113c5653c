package detector

import (
	"context"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
)

// A binding is created with its placement, so the hub takes one write for
// it, not a create and then the binding controller's patch of
// spec.clusters.
func TestBindingCreatedPlaced(t *testing.T) {
	cluster := func(name string) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: clusterv1alpha1.ClusterStatus{APIEnablements: []clusterv1alpha1.APIEnablement{
				{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}}}
	}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "pp-uid"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member3"}}}}}
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "tpl-uid"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}}
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).
		WithObjects(pp, dep, cluster("member1"), cluster("member2"), cluster("member3")).
		WithIndex(&policyv1alpha1.PropagationPolicy{}, kindIndex, selectedKinds).
		WithIndex(&policyv1alpha1.ClusterPropagationPolicy{}, kindIndex, selectedKinds).Build()
	d := &Reconciler{client: c, recorder: record.NewFakeRecorder(10)}
	key := Key{GroupVersionKind: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespace: "shop", Name: "web"}
	if _, err := d.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tc := range rb.Spec.Clusters {
		got = append(got, tc.Name)
	}
	if len(got) != 2 || got[0] != "member1" || got[1] != "member3" {
		t.Errorf("created binding's spec.clusters = %v, want [member1 member3]", got)
	}
	if rb.Generation > 1 || rb.ResourceVersion != "1" {
		t.Errorf("binding written more than once (generation %d, resourceVersion %s)", rb.Generation, rb.ResourceVersion)
	}
}
