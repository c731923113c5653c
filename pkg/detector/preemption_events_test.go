package detector

import (
	"context"
	"errors"
	"strings"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
)

// As Karmada's detector, a preemption ends in an Event on the template:
// PreemptPolicyFailed with the error while the claim cannot be written,
// PreemptPolicySucceed once it is.
func TestPreemptionSendsKarmadasEvents(t *testing.T) {
	selector := []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	low := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "low", UID: "low-uid"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selector, Priority: ptr.To[int32](1)}}
	high := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "high", UID: "high-uid"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selector, Priority: ptr.To[int32](5), Preemption: policyv1alpha1.PreemptAlways}}
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "tpl-uid"}}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dep)
	if err != nil {
		t.Fatal(err)
	}
	dep.Labels, dep.Annotations, _ = ClaimMetadata(&unstructured.Unstructured{Object: raw}, Claim{PropagationPolicy: low}, true)

	failPatches := 1
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(low, high, dep).
		WithIndex(&policyv1alpha1.PropagationPolicy{}, kindIndex, selectedKinds).
		WithIndex(&policyv1alpha1.ClusterPropagationPolicy{}, kindIndex, selectedKinds).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if obj.GetName() == "web" && failPatches > 0 {
				failPatches--
				return errors.New("etcdserver: request timed out")
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	recorder := record.NewFakeRecorder(10)
	d := &Reconciler{client: c, recorder: recorder}
	key := Key{GroupVersionKind: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespace: "shop", Name: "web"}

	if _, err := d.Reconcile(context.Background(), key); err == nil {
		t.Fatal("the claim's write failed, yet the pass reported no error (it would not be tried again)")
	}
	want := "Warning PreemptPolicyFailed Propagation policy(shop/high) failed to preempt propagation policy(shop/low): etcdserver: request timed out"
	if got := nextEvent(recorder); got != want {
		t.Errorf("after a failed claim write: event %q, want %q", got, want)
	}
	if _, err := d.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	want = "Normal PreemptPolicySucceed Propagation policy(shop/high) preempted propagation policy(shop/low) successfully"
	if got := nextEvent(recorder); got != want {
		t.Errorf("after the claim was written: event %q, want %q", got, want)
	}
}

// nextEvent is the recorder's next event, or "" when it has none.
func nextEvent(r *record.FakeRecorder) string {
	for {
		select {
		case e := <-r.Events:
			if strings.Contains(e, "Preempt") {
				return e
			}
		default:
			return ""
		}
	}
}
