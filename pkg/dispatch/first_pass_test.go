package dispatch

import (
	"context"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Nothing reaches a member before the binding controller has decided
// every binding once since this replica began to lead: a Work the previous
// leader left may be behind its template and its holds.
func TestNothingAppliedBeforeTheBindingControllersFirstPass(t *testing.T) {
	w := workFixture(t, false, nil)
	d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
	firstPass := make(chan struct{})
	d.r.FirstPass = firstPass

	// The replica stops leading before the first pass is over.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := d.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if _, err := d.memberDeployment(); err == nil {
		t.Fatal("the Work was applied before the binding controller's first pass")
	}

	close(firstPass)
	d.reconcile(t, w)
	if _, err := d.memberDeployment(); err != nil {
		t.Fatalf("after the first pass the Work is applied: %v", err)
	}
}
