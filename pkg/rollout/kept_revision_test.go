package rollout

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// cacheWithoutHistory is a cache whose ControllerRevision informer has not
// synced yet (a controller just restarted, its informers reconnecting one
// by one): it answers NotFound for every kept revision the API server holds.
type cacheWithoutHistory struct {
	client.Client
}

func (c cacheWithoutHistory) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*appsv1.ControllerRevision); ok {
		return apierrors.NewNotFound(appsv1.Resource("controllerrevisions"), key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// A cache that has not seen the current revision's ControllerRevision yet
// does not start a new revision: the canary would soak again, and a
// promote given for the revision the user is watching would no longer
// match, a hold nobody lifts.
func TestReconcileDoesNotStartARevisionTheCacheHasNotSeenKept(t *testing.T) {
	h := newFakeHub(t, testRollout("web", "web", t0))
	h.reconcile(0)
	h.setImage("nginx:2")
	if got := h.reconcile(time.Minute).Status.Revision; got != 2 {
		t.Fatalf("revision %d after one change, want 2", got)
	}
	for len(h.events.Events) > 0 {
		<-h.events.Events
	}

	h.r.Client, h.r.APIReader = cacheWithoutHistory{h.client}, h.client
	ro := h.reconcile(2 * time.Minute)

	if ro.Status.Revision != 2 {
		t.Errorf("revision %d after a step whose cache had not seen the kept revision 2, want 2 still; clusters %v",
			ro.Status.Revision, states(ro))
	}
	cr := &appsv1.ControllerRevision{}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web-3"}, cr); !apierrors.IsNotFound(err) {
		t.Errorf("ControllerRevision shop/web-3: %v, want none kept (nothing changed)", err)
	}
	for len(h.events.Events) > 0 {
		if e := <-h.events.Events; strings.Contains(e, v1.EventReasonRevisionStarted) {
			t.Errorf("event %q: nothing changed", e)
		}
	}
}
