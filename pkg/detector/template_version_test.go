package detector

import (
	"context"
	"testing"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// A new leader (or one whose hub API server just came back) whose template
// informer is behind its binding informer does not write the binding back
// to the older template: it reads the template from the API server. Before,
// the binding lost the template's new hold (its digest) and recorded the
// older version.
func TestABindingIsNotWrittenFromATemplateOlderThanItRecords(t *testing.T) {
	c, d, dep, key := newTemplateTest()
	ctx := context.Background()
	binding := func() *workv1alpha2.ResourceBinding { t.Helper(); return reconcileBinding(t, c, d, key) }
	binding()
	cached := &unstructured.Unstructured{}
	cached.SetGroupVersionKind(key.GroupVersionKind)
	if err := c.Get(ctx, client.ObjectKeyFromObject(dep), cached); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
		t.Fatal(err)
	}
	dep.Annotations = map[string]string{"propagation.federator.dev/suspended": "incident 42"}
	if err := c.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	held := binding()
	// The next leader's template cache is still at the version before.
	d.client, d.apiReader = interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if u, ok := obj.(*unstructured.Unstructured); ok && u.GetKind() == "Deployment" {
				cached.DeepCopyInto(u)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		}}), c
	after := binding()
	if got, want := after.Spec.Resource.ResourceVersion, held.Spec.Resource.ResourceVersion; got != want {
		t.Errorf("binding records template version %s, want %s (it went back to what a stale cache held)", got, want)
	}
	if got := after.Annotations[workkeys.TemplateHoldsAnnotation]; got == "" || got != held.Annotations[workkeys.TemplateHoldsAnnotation] {
		t.Errorf("binding's %s = %q, want %q: the template's hold was lost", workkeys.TemplateHoldsAnnotation, got, held.Annotations[workkeys.TemplateHoldsAnnotation])
	}
}
