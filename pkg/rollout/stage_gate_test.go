package rollout

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// cacheWithAnOpenGate is a cache whose Gate informer lags: it still has
// every Gate open, as it was before a close the API server has stored.
type cacheWithAnOpenGate struct {
	client.Client
}

func (c cacheWithAnOpenGate) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if g, ok := obj.(*gatingv1alpha1.Gate); ok {
		g.Spec.Default = gatingv1alpha1.Opened
		g.Annotations = nil
	}
	return nil
}

// A stage's gate closed just before a change, while the cache still has
// it open, holds the stage: the gates of a stage about to start are read
// again from the API server.
func TestReconcileConfirmsAStagesGatesBeforeItStarts(t *testing.T) {
	ro := oneStage("gated", nil)
	ro.Spec.Stages[0].Gates = []string{"window"}
	h := newFakeHub(t, ro)
	if err := h.client.Create(context.Background(), &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "window"},
		Spec: gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Closed}}); err != nil {
		t.Fatal(err)
	}
	h.reconcile(0)
	h.setImage("nginx:2")
	h.r.Client, h.r.APIReader = cacheWithAnOpenGate{h.client}, h.client
	got := h.reconcile(time.Minute)
	for _, c := range got.Status.Clusters {
		if c.State != v1.StatePending || c.Revision != 1 {
			t.Errorf("%s: %s at revision %d (%s), want Pending at revision 1: the gate is closed; clusters %v",
				c.Name, c.State, c.Revision, c.Reason, states(got))
		}
	}
	if len(got.Status.Clusters) == 0 || !strings.Contains(got.Status.Clusters[0].Message, "gate 'shop/window' is closed") {
		t.Errorf("clusters %+v: want them to say the gate is closed", got.Status.Clusters)
	}
	// Once the API server has it open too, the stage starts.
	h.r.Client = h.client
	g := &gatingv1alpha1.Gate{}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "window"}, g); err != nil {
		t.Fatal(err)
	}
	g.Spec.Default = gatingv1alpha1.Opened
	if err := h.client.Update(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	got = h.reconcile(2 * time.Minute)
	if len(got.Status.Clusters) == 0 || got.Status.Clusters[0].Revision != 2 {
		t.Errorf("the gate open, the stage did not start: %v", states(got))
	}
}
