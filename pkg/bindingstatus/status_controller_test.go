package bindingstatus

import (
	"context"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/bindingview"
)

var bindingKey = types.NamespacedName{Namespace: "shop", Name: "web-deployment"}

// newStatusHub is a hub as the binding controller leaves it: the
// Deployment shop/web, its binding placed on member1 and member2 with the
// binding controller's Scheduled condition, and one Work per member,
// labelled with the binding's permanent id.
func newStatusHub(t *testing.T) client.Client {
	t.Helper()
	dep := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "tpl-uid", Generation: 1},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: bindingKey.Namespace, Name: bindingKey.Name, Generation: 1,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "rb-id"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "tpl-uid"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 1}},
		},
		Status: workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue,
			Reason: "Success", Message: "Binding has been scheduled successfully.", LastTransitionTime: metav1.Now()}}},
	}
	objs := []client.Object{dep, rb}
	for _, c := range []string{"member1", "member2"} {
		objs = append(objs, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-" + c, Name: "web-deployment",
			Generation: 1, Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "rb-id"},
			Annotations: map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotationKey: "shop",
				workv1alpha2.ResourceBindingNameAnnotationKey: bindingKey.Name}}})
	}
	return fake.NewClientBuilder().WithScheme(policy.NewScheme()).
		WithIndex(&workv1alpha1.Work{}, bindingview.WorkBindingIndex, bindingview.WorkBinding).
		WithObjects(objs...).
		WithStatusSubresource(&workv1alpha2.ResourceBinding{}, &workv1alpha1.Work{}, &appsv1.Deployment{}).
		Build()
}

func TestReconcilerAggregates(t *testing.T) {
	hub := newStatusHub(t)
	r := &Reconciler{Client: hub}
	ctx := context.Background()
	// Each member reports its Deployment running the Work's generation.
	for _, c := range []string{"member1", "member2"} {
		w := &workv1alpha1.Work{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "karmada-es-" + c, Name: "web-deployment"}, w); err != nil {
			t.Fatal(err)
		}
		w.Status.Conditions = []metav1.Condition{
			{Type: "Applied", Status: metav1.ConditionTrue, Reason: "AppliedSuccessful", ObservedGeneration: w.Generation},
			{Type: "Dispatching", Status: metav1.ConditionTrue, Reason: "Dispatching", ObservedGeneration: w.Generation},
		}
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Status: rawStatus(t,
			`{"replicas":1,"readyReplicas":1,"updatedReplicas":1,"availableReplicas":1,"observedGeneration":3,"generation":3}`)}}
		if err := hub.Status().Update(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: bindingKey}); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(rb.Status.Conditions, "FullyApplied"); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("FullyApplied = %+v", c)
	}
	if c := meta.FindStatusCondition(rb.Status.Conditions, "Scheduled"); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Scheduled = %+v: the status controller must keep the binding controller's conditions", c)
	}
	if len(rb.Status.AggregatedStatus) != 2 || rb.Status.AggregatedStatus[0].ClusterName != "member1" || !rb.Status.AggregatedStatus[1].Applied {
		t.Errorf("aggregatedStatus = %+v", rb.Status.AggregatedStatus)
	}
	dep := &appsv1.Deployment{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}
	if dep.Status.Replicas != 2 || dep.Status.ReadyReplicas != 2 || dep.Status.ObservedGeneration != 1 {
		t.Errorf("template status = %+v, want 2 replicas, 2 ready, observedGeneration 1", dep.Status)
	}

	// Nothing the members report changed: neither the binding nor the
	// template is written again.
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: bindingKey}); err != nil {
		t.Fatal(err)
	}
	again := &appsv1.Deployment{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != dep.ResourceVersion {
		t.Errorf("the template was rewritten (resourceVersion %s → %s) though its aggregated status did not change",
			dep.ResourceVersion, again.ResourceVersion)
	}
}

func rawStatus(t *testing.T, s string) *runtime.RawExtension {
	t.Helper()
	return &runtime.RawExtension{Raw: []byte(s)}
}
