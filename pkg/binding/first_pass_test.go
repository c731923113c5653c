package binding

import (
	"context"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/internal/redecide"
)

// Only a pass that decided a binding counts for the dispatchers' wait
// after a replica begins to lead: one that stopped because its cache was
// behind wrote no hold, and the Works the previous leader left would be
// dispatched as they are (found by the chaos checker, seed 2026: a
// member stored a version its template and policy held, just after a
// change of leader).
func TestOnlyAPassThatDecidedCountsForTheFirstPass(t *testing.T) {
	behind := true
	b := newBindingTest(t, nil, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if _, ok := obj.(*workv1alpha1.Work); ok && behind {
			return apierrors.NewAlreadyExists(workv1alpha1.Resource("works"), obj.GetName())
		}
		return c.Create(ctx, obj, opts...)
	}})
	firstPass := redecide.NewFirstPass()
	b.works.FirstPass = firstPass
	firstPass.Listed([]string{keyOf(bindingKey)})
	done := func() bool {
		select {
		case <-firstPass.Done():
			return true
		default:
			return false
		}
	}

	b.reconcile(t)
	if done() {
		t.Fatal("a pass that found its cache behind (no Work written) counted as deciding the binding")
	}
	behind = false
	b.reconcile(t)
	if !done() {
		t.Fatal("the pass that wrote the Works did not count")
	}
}
