package dispatch

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/install/crds"
	"github.com/federator-dev/federator/internal/fleettest"
	"github.com/federator-dev/federator/internal/hubclock"
	"github.com/federator-dev/federator/pkg/fleet"
)

// Issue 70, item 11: a `freeze --for 5m` read by an agent whose clock is
// 10 minutes ahead of the hub's still holds its member for those 5
// minutes of the hub's clock, which stamped the freeze's start; judged by
// the agent's own clock it had ended before it began.
func TestAFreezeEndsByTheHubsClockNotTheWritersOwn(t *testing.T) {
	crdList, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	f := fleettest.Start(t, fleet.Options{CRDs: crdList})
	ahead := aheadClock(10 * time.Minute)
	hubClock := hubclock.New(ahead)
	hub, err := client.New(hubClock.Observe(f.Hub.Config), client.Options{Scheme: policy.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	freeze := &gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{Name: "for-5m"},
		Spec: gatingv1alpha1.FreezeSpec{Clusters: []string{"edge"}, Duration: &metav1.Duration{Duration: 5 * time.Minute}}}
	if err := hub.Create(ctx, freeze); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		clock    clock.PassiveClock
		by       string
		frozen   bool
		retryMin time.Duration
	}{
		{clock: hubClock, by: "the hub's clock", frozen: true, retryMin: 4 * time.Minute},
		{clock: ahead, by: "the agent's clock, 10m ahead (not what the guard uses)", frozen: false},
	} {
		g := &FreezeGuard{Reader: hub, Clock: c.clock}
		err := g.Check(ctx, "edge")
		fe := asFrozen(err)
		switch {
		case c.frozen && (fe == nil || fe.Freeze != "for-5m"):
			t.Errorf("by %s: %v, want Freeze for-5m to hold edge", c.by, err)
		case c.frozen && (fe.RetryAfter() < c.retryMin || fe.RetryAfter() > 5*time.Minute+time.Second):
			t.Errorf("by %s: retried after %v, want about 5m: when the freeze ends by the hub's clock", c.by, fe.RetryAfter())
		case !c.frozen && err != nil:
			t.Errorf("by %s: %v, want no hold (this row shows the skew is real)", c.by, err)
		}
	}
}

// aheadClock is this machine's clock, by so much ahead.
type aheadClock time.Duration

func (a aheadClock) Now() time.Time                  { return time.Now().Add(time.Duration(a)) }
func (a aheadClock) Since(t time.Time) time.Duration { return a.Now().Sub(t) }
