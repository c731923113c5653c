package binding

import (
	"context"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/internal/holdwrites"
)

// The Work writes that hold or release a cluster go in the hold lane (ahead
// of bulk writes to the hub, internal/holdwrites); a change that holds nothing
// new goes in the bulk lane.
func TestWorkWritesThatHoldGoInTheHoldLane(t *testing.T) {
	var writes []bool // one per Work write: in the hold lane?
	record := func(ctx context.Context, obj client.Object) {
		if _, ok := obj.(*workv1alpha1.Work); ok {
			writes = append(writes, holdwrites.IsHold(ctx))
		}
	}
	b := newBindingTest(t, nil, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			record(ctx, obj)
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			record(ctx, obj)
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	step := func(name string, change func(), wantWrites int, wantHold bool) {
		t.Helper()
		change()
		writes = nil
		b.reconcile(t)
		if len(writes) != wantWrites {
			t.Fatalf("%s: %d Work writes, want %d", name, len(writes), wantWrites)
		}
		for _, hold := range writes {
			if hold != wantHold {
				t.Errorf("%s: Work written in the hold lane = %v, want %v", name, hold, wantHold)
			}
		}
	}
	tpl := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	step("first propagation", func() {}, 2, false)
	step("suspended", func() { b.annotate(t, tpl, ptr.To("incident 42")) }, 2, true)
	step("a change while held", func() {
		if err := b.hub.Patch(context.Background(), tpl, client.RawPatch("application/merge-patch+json",
			[]byte(`{"spec":{"replicas":5}}`))); err != nil {
			t.Fatal(err)
		}
	}, 2, false)
	step("resumed", func() { b.annotate(t, tpl, nil) }, 2, true)
}
