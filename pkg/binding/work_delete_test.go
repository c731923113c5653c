package binding

import (
	"context"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// The Work of a cluster no longer targeted is deleted only as the pass
// read it: a Work deleted by name from a cache that lags would be a stored
// Work without the deletion delay the pass saw, and its member copy would
// go at once. Here the cache still has member2's Work with the 1h delay
// it carried before the user took the delay off; the user then put it
// back and moved the template off member2.
func TestAWorkIsDeletedOnlyAsThePassReadIt(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	pp := b.policy(t)
	b.setDelay(t, pp, "1h")
	b.reconcile(t)
	if got := b.manifestDelay(t, "member2"); got != "1h" {
		t.Fatalf("member2's manifest carries deletion delay %q, want 1h", got)
	}
	stale := b.work(t, "member2").DeepCopy()

	if err := b.hub.Patch(ctx, pp, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"federator.dev/deletion-delay":null}}}`))); err != nil {
		t.Fatal(err)
	}
	b.reconcile(t)
	if got := b.manifestDelay(t, "member2"); got != "" {
		t.Fatalf("member2's manifest carries deletion delay %q after it was taken off", got)
	}
	b.setDelay(t, pp, "1h")
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	rb.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member1"}
	rb.Generation++
	if err := b.hub.Update(ctx, rb); err != nil {
		t.Fatal(err)
	}

	b.works.Client = interceptor.NewClient(b.hub.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if ws, ok := list.(*workv1alpha1.WorkList); ok {
				for i := range ws.Items {
					if ws.Items[i].Namespace == stale.Namespace && ws.Items[i].Name == stale.Name {
						stale.DeepCopyInto(&ws.Items[i])
					}
				}
			}
			return nil
		},
	})
	b.works.APIReader = b.hub
	_, _ = b.works.Reconcile(ctx, ctrl.Request{NamespacedName: bindingKey})

	stored := &workv1alpha1.Work{}
	if err := b.hub.Get(ctx, client.ObjectKeyFromObject(stale), stored); err != nil {
		t.Fatal(err)
	}
	if !stored.DeletionTimestamp.IsZero() {
		if got := workkeys.FirstManifest(stored).GetAnnotations()["federator.dev/deletion-delay"]; got != "1h" {
			t.Errorf("member2's Work was deleted carrying deletion delay %q, want 1h: the pass judged it from a cached copy "+
				"that had the delay already, and its member copy would be deleted at once", got)
		}
	}
}
