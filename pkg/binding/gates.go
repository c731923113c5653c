package binding

import (
	"context"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/pkg/gatestate"
	"github.com/federator-dev/federator/pkg/hold"
)

// resolveGates judges each gate by the clock: its spec and requests (from
// the cache) evaluated now with gatestate.At, the function the gate
// controller writes its status with. The status alone would count an
// expired request, or a closing window that began while the gate
// controller was off or behind, as open.
func (r *Reconciler) resolveGates(ctx context.Context, gates []hold.Gate) ([]hold.Gate, error) {
	return r.resolveGatesFrom(ctx, r.Client, gates)
}

// resolveGatesFrom is resolveGates reading the Gates from reader: the API
// server when a release is confirmed (confirmReleases).
func (r *Reconciler) resolveGatesFrom(ctx context.Context, reader client.Reader, gates []hold.Gate) ([]hold.Gate, error) {
	now := r.now()
	for i := range gates {
		g := &gates[i]
		if g.Problem != "" {
			continue
		}
		ns, name, _ := strings.Cut(g.Ref, "/")
		gate := &gatingv1alpha1.Gate{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, gate)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		e := gatestate.At(gate, now)
		g.Found, g.Opened, g.Why = true, e.Open, e.Message
		if e.NextChange != nil {
			g.ChangesAt = *e.NextChange
		}
	}
	return gates, nil
}

// minGateRecheck keeps a binding looked at a hair early from spinning.
const minGateRecheck = 50 * time.Millisecond

// recheckGates asks for the binding again when the first gate it waits for
// changes by itself (a request expiring, a schedule window starting or
// ending), or a freeze ends, so a hold begins on time with no event to bring it: the gate
// controller may be off, and then writes nothing that would.
func (r *Reconciler) recheckGates(result ctrl.Result, in hold.Input) ctrl.Result {
	var first time.Time
	consider := func(gates []hold.Gate) {
		for _, g := range gates {
			if !g.ChangesAt.IsZero() && (first.IsZero() || g.ChangesAt.Before(first)) {
				first = g.ChangesAt
			}
		}
	}
	consider(in.PolicyGates)
	for _, gates := range in.ClusterGates {
		consider(gates)
	}
	// A freeze that ends by itself releases then, with no event either.
	if !in.FrozenUntil.IsZero() && (first.IsZero() || in.FrozenUntil.Before(first)) {
		first = in.FrozenUntil
	}
	if first.IsZero() {
		return result
	}
	after := max(first.Sub(r.now()), minGateRecheck)
	if result.RequeueAfter == 0 || after < result.RequeueAfter {
		result.RequeueAfter = after
	}
	return result
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return clock.RealClock{}.Now()
	}
	return r.Clock.Now()
}
