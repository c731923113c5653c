package detector

import (
	"context"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// The binding carries a digest of its template's hold annotations, which
// changes when they change and goes when they go: the binding controller
// takes such a binding before bulk work (internal/holdqueue).
func TestBindingCarriesTemplateHolds(t *testing.T) {
	c, d, dep, key := newTemplateTest()
	ctx := context.Background()
	digest := func() (string, bool) {
		t.Helper()
		rb := reconcileBinding(t, c, d, key)
		v, ok := rb.Annotations[workkeys.TemplateHoldsAnnotation]
		return v, ok
	}
	annotate := func(annotations map[string]string) {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
			t.Fatal(err)
		}
		dep.Annotations = annotations
		if err := c.Update(ctx, dep); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok := digest(); ok {
		t.Fatalf("a template with no hold annotation: binding has %s=%q", workkeys.TemplateHoldsAnnotation, v)
	}
	annotate(map[string]string{"propagation.federator.dev/suspended": "incident 42", "team": "shop"})
	suspended, ok := digest()
	if !ok || suspended == "" {
		t.Fatalf("a suspended template: binding has no %s", workkeys.TemplateHoldsAnnotation)
	}
	annotate(map[string]string{"propagation.federator.dev/suspended": "incident 42", "team": "payments"})
	if v, _ := digest(); v != suspended {
		t.Errorf("another annotation changed: digest %q, want it unchanged (%q)", v, suspended)
	}
	annotate(map[string]string{"suspended.propagation.federator.dev/member2": "true"})
	if v, _ := digest(); v == suspended || v == "" {
		t.Errorf("the hold changed to one cluster: digest %q, want a new one", v)
	}
	annotate(map[string]string{"team": "payments"})
	if v, ok := digest(); ok {
		t.Errorf("the holds are gone: binding still has %s=%q", workkeys.TemplateHoldsAnnotation, v)
	}
}

// newTemplateTest is a hub with the Deployment shop/web and the
// PropagationPolicy shop/web that claims it, and a detector on it.
func newTemplateTest() (client.Client, *Reconciler, *appsv1.Deployment, Key) {
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "pp-uid"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}}
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "tpl-uid"}}
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(pp, dep).
		WithIndex(&policyv1alpha1.PropagationPolicy{}, kindIndex, selectedKinds).
		WithIndex(&policyv1alpha1.ClusterPropagationPolicy{}, kindIndex, selectedKinds).Build()
	d := &Reconciler{client: c, recorder: record.NewFakeRecorder(10)}
	return c, d, dep, Key{GroupVersionKind: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespace: "shop", Name: "web"}
}

// reconcileBinding runs the detector on key and returns the binding as
// stored.
func reconcileBinding(t *testing.T, c client.Client, d *Reconciler, key Key) *workv1alpha2.ResourceBinding {
	t.Helper()
	if _, err := d.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: key.Namespace, Name: "web-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	return rb
}
