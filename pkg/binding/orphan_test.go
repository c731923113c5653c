package binding

import (
	"context"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// Found by the chaos checker (seed 7): a new leader, its caches just back
// after a hub restart, deleted a deleted template's binding's Works as its
// cache listed them, missed the one written a moment before, and let the
// binding go. The Work outlived it, held, and the template created again
// never reached that member: its binding refused the Work of "another
// owner" on every pass.

// Deleting a binding deletes every Work the API server stores for it, not
// only those its cache shows.
func TestFinalizeDeletesWorksTheCacheHasNotSeen(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.reconcile(t)
	b.deleteBinding(t)
	// The cache behind: it lists no Work at all.
	b.works.APIReader = b.hub
	b.works.Client = interceptor.NewClient(b.hub.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*workv1alpha1.WorkList); ok {
				return nil
			}
			return c.List(ctx, list, opts...)
		}})
	b.reconcile(t)
	stored := &workv1alpha1.WorkList{}
	if err := b.hub.List(ctx, stored); err != nil {
		t.Fatal(err)
	}
	for _, w := range stored.Items {
		if w.DeletionTimestamp.IsZero() {
			t.Errorf("Work %s/%s outlives its deleted binding", w.Namespace, w.Name)
		}
	}
	if len(stored.Items) != 2 {
		t.Fatalf("%d Works stored, want the 2 the first pass wrote (being deleted)", len(stored.Items))
	}
}

// A Work a deleted binding left behind, held, is taken over by the binding
// of the template's next life and written as that binding wants it; a
// Work whose owning binding exists is not.
func TestBindingTakesOverTheWorkOfADeletedBinding(t *testing.T) {
	ctx := context.Background()
	orphan := func(owner string) *workv1alpha1.Work {
		return &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: names.GenerateExecutionSpaceName("member1"), Name: names.GenerateWorkName("Deployment", "web", "shop"),
				Labels:      map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: owner},
				Annotations: map[string]string{workkeys.HoldReasonAnnotation: "RolloutStage", workkeys.BindingGenerationAnnotation: "15"}},
			Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true), Workload: workv1alpha1.WorkloadTemplate{
				Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment"}`)}}}}},
		}
	}
	for _, tc := range []struct {
		name       string
		ownerLives bool
	}{{name: "owner gone"}, {name: "owner lives", ownerLives: true}} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBindingTest(t, nil, interceptor.Funcs{})
			if err := b.hub.Create(ctx, orphan("old-id")); err != nil {
				t.Fatal(err)
			}
			if tc.ownerLives {
				other := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web-deployment",
					Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "old-id"}}}
				if err := b.hub.Create(ctx, other); err != nil {
					t.Fatal(err)
				}
			}
			b.works.APIReader = b.hub
			_, _ = b.works.Reconcile(ctx, ctrl.Request{NamespacedName: bindingKey})
			w := &workv1alpha1.Work{}
			if err := b.hub.Get(ctx, client.ObjectKeyFromObject(orphan("")), w); err != nil {
				t.Fatal(err)
			}
			owner := w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
			if tc.ownerLives {
				if owner != "old-id" || !held(w) {
					t.Errorf("the Work of a binding that exists was taken over: owner %q, held %t", owner, held(w))
				}
				return
			}
			if owner != "rb-id" || held(w) || w.Annotations[workkeys.HoldReasonAnnotation] != "" {
				t.Errorf("orphan not taken over: owner %q, held %t, annotations %v; want rb-id, released", owner, held(w), w.Annotations)
			}
		})
	}
}
