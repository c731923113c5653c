package redecide

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Template names a resource template, as a binding's spec.resource does.
type Template struct {
	APIVersion, Kind, Namespace, Name string
}

// Binding is one binding a round waits for (a ClusterResourceBinding when
// Namespace is empty), and its template.
type Binding struct {
	Namespace, Name string
	Template        Template
}

// BindingKey names a ResourceBinding (namespace set) or a
// ClusterResourceBinding.
func BindingKey(namespace, name string) string {
	if namespace == "" {
		return "ClusterResourceBinding/" + name
	}
	return "ResourceBinding/" + namespace + "/" + name
}

// TemplateKey names a resource template of kind gk, for the hold changes
// the detector decides (holdqueue.Deciders) and the dispatchers wait for.
func TemplateKey(gk schema.GroupKind, namespace, name string) string {
	return gk.String() + "/" + namespace + "/" + name
}

// Ticket is taken when a pass begins: only a pass that began after what
// it must see counts.
type Ticket uint64

// Round is the catching up after breaks in the hub caches' watches. The
// zero Round is not usable: use New. A nil *Round is always caught up.
type Round struct {
	list     func(context.Context) ([]Binding, error)
	patience time.Duration
	log      logr.Logger

	templates chan event.TypedGenericEvent[Template]
	bindings  map[bool]chan event.TypedGenericEvent[types.NamespacedName]
	recovered chan struct{}
	// done is closed when Start returns: nothing waits to send after.
	done chan struct{}

	mu sync.Mutex
	// clock orders the tickets, the round's start and each detection.
	clock uint64
	// broken: a break that no round has caught up with; since when, and
	// what it was.
	broken bool
	since  time.Time
	cause  string
	// started is the clock when the current round listed its bindings;
	// 0 while none runs; listed is when.
	started uint64
	listed  time.Time
	pending map[string]*entry
	total   int
}

// entry is what a round knows of one binding.
type entry struct {
	// detected is the clock when the detector decided the template in
	// this round; 0 before.
	detected uint64
	// floor is the binding's generation after the detector's pass: the
	// binding controller's pass must read at least this.
	floor int64
	name  types.NamespacedName
}

// New is a Round that lists the bindings to wait for with list, and gives
// up waiting for those that cannot be decided after patience.
//
// A new Round counts as broken: the replica that starts it has yet to
// lead, and when it does, what the previous leader's detector had not
// carried into the bindings (a suspension written just before it
// stopped) must be, before the Works are dispatched.
func New(list func(context.Context) ([]Binding, error), patience time.Duration, log logr.Logger) *Round {
	return &Round{list: list, patience: patience, log: log,
		broken: true, since: time.Now(), cause: leading,
		templates: make(chan event.TypedGenericEvent[Template]),
		bindings: map[bool]chan event.TypedGenericEvent[types.NamespacedName]{
			false: make(chan event.TypedGenericEvent[types.NamespacedName]), true: make(chan event.TypedGenericEvent[types.NamespacedName])},
		recovered: make(chan struct{}, 1), done: make(chan struct{})}
}

// Templates are the templates the detector must decide again: the source
// of its channel watch.
func (r *Round) Templates() <-chan event.TypedGenericEvent[Template] { return r.templates }

// Bindings are the bindings the binding controller of one scope must
// decide again.
func (r *Round) Bindings(clusterScoped bool) <-chan event.TypedGenericEvent[types.NamespacedName] {
	return r.bindings[clusterScoped]
}

// Break records that a hub cache the decisions read stopped watching: from
// now until a round has caught up, Current refuses.
func (r *Round) Break() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.broken {
		r.broken, r.since = true, time.Now()
	}
	r.cause = cachesBroke
	r.started, r.pending = 0, nil
}

// The causes of a round, as Current and the log tell them.
const (
	leading     = "this replica began to lead"
	cachesBroke = "the hub caches' break"
)

// Recovered says the caches watch again after a break: a round begins
// (Start). It never blocks.
func (r *Round) Recovered() {
	if r == nil {
		return
	}
	r.Break()
	select {
	case r.recovered <- struct{}{}:
	default:
	}
}

// Current is nil when the Works of binding (a BindingKey; "" for a Work no
// binding wrote) may be dispatched: no break waits to be caught up with,
// or the round that catches up with it has decided binding again, or was
// not waiting for it. Until the round has listed its bindings, no Work
// may be. One binding that cannot be decided holds back only its own
// Works (until the round's patience ends).
func (r *Round) Current(binding string) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.broken {
		return nil
	}
	if r.started == 0 && r.cause == cachesBroke {
		return fmt.Errorf("the hub caches stopped watching the hub %s ago; nothing is dispatched until they watch again and every binding is decided again",
			time.Since(r.since).Round(time.Millisecond))
	}
	if r.started == 0 {
		return fmt.Errorf("%s %s ago; nothing is dispatched until every binding is decided again", r.cause, time.Since(r.since).Round(time.Millisecond))
	}
	if r.pending[binding] == nil {
		return nil
	}
	return fmt.Errorf("%s is among the %d of %d bindings still to be decided again since %s: its Works wait",
		binding, len(r.pending), r.total, r.cause)
}

// Waits reports whether the round running now waits for binding key to be
// decided again.
func (r *Round) Waits(key string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending[key] != nil
}

// Begin is the ticket of a pass that begins now.
func (r *Round) Begin() Ticket {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clock++
	return Ticket(r.clock)
}

// Detected records that the detector decided the template of binding key
// in a pass that began at t, leaving the binding at generation floor (0:
// it wrote none, or deleted it), and asks the binding controller to decide
// the binding again. A pass that began before the round counts for
// nothing.
func (r *Round) Detected(key string, t Ticket, floor int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	e := r.pending[key]
	if e == nil || uint64(t) <= r.started {
		r.mu.Unlock()
		return
	}
	r.clock++
	e.detected = r.clock
	e.floor = max(e.floor, floor)
	ch, name := r.bindings[e.name.Namespace == ""], e.name
	r.mu.Unlock()
	// Not waiting on the binding controller's queue from the detector's
	// worker: the channel source reads at once, but never block here.
	go func() {
		select {
		case ch <- event.TypedGenericEvent[types.NamespacedName]{Object: name}:
		case <-r.done:
		}
	}()
}

// Decided records that the binding controller decided binding key in a
// pass that began at t and read its generation: it counts when the
// detector's pass came before it and the binding read is at least the
// one the detector left.
func (r *Round) Decided(key string, t Ticket, generation int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.pending[key]
	if e == nil || e.detected == 0 || uint64(t) <= e.detected || generation < e.floor {
		return
	}
	delete(r.pending, key)
	r.closeIfDone()
}

func (r *Round) closeIfDone() {
	if r.started != 0 && len(r.pending) == 0 {
		r.log.Info("the hub's decisions caught up after "+r.cause+": dispatching resumes",
			"bindings", r.total, "after", time.Since(r.since).Round(time.Millisecond).String(),
			"round", time.Since(r.listed).Round(time.Millisecond).String())
		r.broken, r.started, r.pending = false, 0, nil
	}
}

// Start runs the rounds until ctx ends: a manager runnable, on the leader.
func (r *Round) Start(ctx context.Context) error {
	defer close(r.done)
	// Leading now: the first round begins at once (New).
	select {
	case r.recovered <- struct{}{}:
	default:
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.recovered:
		}
		if err := r.run(ctx); err != nil {
			r.log.Error(err, "catching up after the hub caches' break; retrying")
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			r.Recovered()
		}
	}
}

// run lists the bindings, asks the detector to decide their templates
// again, and waits until the round is over, a new break begins another,
// or patience ends.
func (r *Round) run(ctx context.Context) error {
	bindings, err := r.list(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if !r.broken {
		r.mu.Unlock()
		return nil
	}
	r.clock++
	r.started, r.listed = r.clock, time.Now()
	started := r.started
	r.pending = make(map[string]*entry, len(bindings))
	for _, b := range bindings {
		r.pending[BindingKey(b.Namespace, b.Name)] = &entry{name: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}}
	}
	r.total = len(r.pending)
	r.closeIfDone()
	r.mu.Unlock()
	for _, b := range bindings {
		select {
		case r.templates <- event.TypedGenericEvent[Template]{Object: b.Template}:
		case <-ctx.Done():
			return nil
		}
	}
	deadline := time.NewTimer(r.patience)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.recovered:
			// A new break, over already: a new round.
			r.Recovered()
			return nil
		case <-tick.C:
			r.mu.Lock()
			over := r.started != started
			r.mu.Unlock()
			if over {
				return nil
			}
		case <-deadline.C:
			r.giveUp(started)
			return nil
		}
	}
}

// giveUp ends round started, if it still runs, although some bindings were
// not decided again: they keep failing, and say why themselves.
func (r *Round) giveUp(started uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started != started {
		return
	}
	var pending []string
	for k := range r.pending {
		pending = append(pending, k)
	}
	slices.Sort(pending)
	r.log.Info("dispatching resumes although these bindings could not be decided again since "+r.cause+"; "+
		"their Works may carry what was decided before it until they are (each binding's WorksSynced condition says why)",
		"waited", r.patience.String(), "bindings", pending)
	r.pending = nil
	r.closeIfDone()
}
