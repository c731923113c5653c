package rollout

import (
	"context"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// editMidPass is a cache an OverridePolicy edit lands in while a step
// renders (its informer updates on its own goroutine): once it has
// answered the first OverridePolicy list, edit is stored, so a cluster
// rendered after that would see it and one rendered before would not.
type editMidPass struct {
	client.Client
	edit   func()
	landed bool
}

func (c *editMidPass) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := c.Client.List(ctx, list, opts...)
	if _, ok := list.(*policyv1alpha1.OverridePolicyList); ok && !c.landed {
		c.landed = true
		c.edit()
	}
	return err
}

// One step renders every cluster from one read of the overrides: an
// OverridePolicy edit landing in the cache between two clusters' renders
// would keep a revision with the edit on some clusters only (the canary
// keeping what it had), and the next step would start one more revision
// for the rest of the same edit (the e2e spec rollout_overrides saw
// revision 4 where one edit makes 3).
func TestReconcileRendersEveryClusterFromOneReadOfTheOverrides(t *testing.T) {
	h := newOverriddenHub(t, "", "0.9")
	h.r.Client = &editMidPass{Client: h.client, edit: func() { h.tagOn("", "0.8") }}
	h.reconcile(time.Second)
	h.r.Client = h.client
	for i := range 3 {
		h.reconcile(time.Duration(2+i) * time.Second)
	}

	got := h.reconcile(5 * time.Second)
	if got.Status.Revision != 2 {
		t.Errorf("revision %d after one OverridePolicy edit, want 2; events %q", got.Status.Revision, h.drainEvents())
	}
	for _, m := range []string{"member1", "member2", "member3"} {
		if image, _ := h.keptImage(2, m); image != "nginx:0.8" {
			t.Errorf("revision 2 keeps %s for %s, want the edit everywhere: nginx:0.8", image, m)
		}
	}
}

// drainEvents are the events recorded since the last drain.
func (h *fakeHub) drainEvents() []string {
	var out []string
	for len(h.events.Events) > 0 {
		out = append(out, <-h.events.Events)
	}
	return out
}
