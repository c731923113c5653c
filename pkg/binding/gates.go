package binding

import (
	"context"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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
	consider(in.TemplateGates)
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

// templateGates are the gates the template lists (its
// gating.federator.dev/gates annotation; a bare name is in the template's
// namespace, and a cluster-scoped template must name one), each named with
// the template as a policy's are with the policy; not yet judged.
func templateGates(tpl hold.Object) []hold.Gate {
	v, ok := tpl.Annotations[gatingv1alpha1.GatesAnnotation]
	if !ok {
		return nil
	}
	return hold.ParseGates(v, tpl.Namespace, tpl.String())
}

// gateWaiters knows, for each Gate, the bindings whose template lists it:
// a template's annotations are on no object the Gate watch can list (the
// binding carries only their digest), so each pass records what its
// template lists, before it judges those gates, and a Gate's event is
// mapped to the bindings recorded for it. It is rebuilt by the passes
// themselves: after a start or a change of leader, every binding is
// decided (internal/redecide's first pass), and the template's gates are
// read again then; a Gate that changes before a binding's first pass is
// read by that pass.
type gateWaiters struct {
	mu        sync.Mutex
	byBinding map[types.NamespacedName][]string
	byGate    map[string]map[types.NamespacedName]struct{}
}

// set records that binding waits for the gates refs (none: it waits for
// none of a template's).
func (w *gateWaiters) set(binding types.NamespacedName, gates []hold.Gate) {
	if w == nil {
		return
	}
	var refs []string
	for _, g := range gates {
		if g.Problem == "" {
			refs = append(refs, g.Ref)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ref := range w.byBinding[binding] {
		delete(w.byGate[ref], binding)
		if len(w.byGate[ref]) == 0 {
			delete(w.byGate, ref)
		}
	}
	if len(refs) == 0 {
		delete(w.byBinding, binding)
		return
	}
	if w.byBinding == nil {
		w.byBinding, w.byGate = map[types.NamespacedName][]string{}, map[string]map[types.NamespacedName]struct{}{}
	}
	w.byBinding[binding] = refs
	for _, ref := range refs {
		if w.byGate[ref] == nil {
			w.byGate[ref] = map[types.NamespacedName]struct{}{}
		}
		w.byGate[ref][binding] = struct{}{}
	}
}

// of is the bindings recorded as waiting for gate ("namespace/name").
func (w *gateWaiters) of(gate string) []reconcile.Request {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	reqs := make([]reconcile.Request, 0, len(w.byGate[gate]))
	for b := range w.byGate[gate] {
		reqs = append(reqs, reconcile.Request{NamespacedName: b})
	}
	return reqs
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return clock.RealClock{}.Now()
	}
	return r.Clock.Now()
}
