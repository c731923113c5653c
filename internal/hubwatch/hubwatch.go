// Package hubwatch owns knowing whether this replica's hub caches are
// watching the hub. An informer whose watch broke (the hub's API server
// restarted, a connection dropped) retries with a backoff that grows to 30 s
// and resets only after two quiet minutes (client-go's reflector): until it
// watches again, its cache misses every write, and nothing else says so. A
// decision read from such a cache (a Work released before a suspension the
// cache has not seen) must not reach a member. The Tracker observes each
// informer's watch through the ListerWatcher it is built with, and Current
// says whether the caches a decision rests on are watching, and have been
// for long enough that what they received has been acted on.
package hubwatch

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// DefaultSettle is how long an informer must have watched again before
// its cache counts as current: the controllers' reaction to what a
// resumed watch delivered, well under a second when nothing waits. It
// covers a watch that ended and resumed without loss (the API server's
// timeout); after a break (a failed list or watch, a relist) the
// controllers' catching up is proven, not waited for (Breaks).
const DefaultSettle = time.Second

// Tracker observes the watches of the informers built by its NewInformer.
// The zero Tracker is not usable: use New.
type Tracker struct {
	scheme *runtime.Scheme
	clock  clock.PassiveClock
	settle time.Duration

	mu        sync.Mutex
	informers []*informer
	// breaks is told of each break and recovery (CatchUp).
	breaks Breaks
}

// Breaks is told when a hub cache stops watching in a way that can lose
// or delay what it receives (a watch or list that fails, a relist), and
// when the caches watch again after one: internal/redecide's Round.
type Breaks interface {
	// Break: a cache of Karmada's or federator's kinds broke; called
	// with the Tracker's lock held, before any cache counts as current.
	Break()
	// Recovered: every such cache watches again, and so does the cache
	// that had broken (of those kinds, or of templates).
	Recovered()
}

// CatchUp tells b of each break and recovery from now on.
func (t *Tracker) CatchUp(b Breaks) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.breaks = b
}

// informer is the state of one informer's watch.
type informer struct {
	kind schema.GroupKind
	// template: the informer holds unstructured objects (the templates of
	// any kind); Current counts it only when its kind is asked for.
	template bool
	open     int
	// since is when the watch opened when open, else when it last failed
	// or closed (when the informer was made, before its first watch).
	since time.Time
	// failing is the error of the last attempt to watch, while it fails.
	failing error
	// listed: the informer listed once; a second list is a relist, which
	// delivers the changes it missed as one.
	listed bool
	// broke: a list or watch failed, or a relist, since it last watched.
	broke bool
}

// New is a Tracker that resolves typed objects' kinds with scheme and
// counts a cache as current settle after its watch (re)opened; the real
// clock when clk is nil.
func New(scheme *runtime.Scheme, settle time.Duration, clk clock.PassiveClock) *Tracker {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Tracker{scheme: scheme, clock: clk, settle: settle}
}

// NewInformer is controller-runtime's cache.Options.NewInformer: the
// shared informer client-go builds, around a ListerWatcher the Tracker
// observes.
func (t *Tracker) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return toolscache.NewSharedIndexInformer(t.Observe(lw, obj), obj, resync, indexers)
}

// Observe wraps lw, the ListerWatcher of an informer of obj's kind, so
// that the Tracker knows whether its watch is open.
func (t *Tracker) Observe(lw toolscache.ListerWatcher, obj runtime.Object) toolscache.ListerWatcher {
	in := &informer{kind: t.kindOf(obj), since: t.clock.Now()}
	_, unstructuredObj := obj.(*unstructured.Unstructured)
	in.template = unstructuredObj && !t.controlPlane(obj.GetObjectKind().GroupVersionKind())
	t.mu.Lock()
	t.informers = append(t.informers, in)
	t.mu.Unlock()
	return &observed{inner: toolscache.ToListerWatcherWithContext(lw), tracker: t, informer: in}
}

func (t *Tracker) kindOf(obj runtime.Object) schema.GroupKind {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk.GroupKind()
	}
	if t.scheme != nil {
		if gvks, _, err := t.scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			return gvks[0].GroupKind()
		}
	}
	return schema.GroupKind{Kind: fmt.Sprintf("%T", obj)}
}

// Current is nil when every typed informer (federator's own kinds, the
// Karmada kinds, namespaces: what every decision reads) and every
// informer of templates of the given kinds is watching the hub, and has
// been for the settle time; else an error that names the first that is
// not and since when.
func (t *Tracker) Current(templates ...schema.GroupKind) error {
	if t == nil {
		return nil
	}
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var behind []string
	for _, in := range t.informers {
		if in.template && !contains(templates, in.kind) {
			continue
		}
		switch {
		case in.open == 0 && in.failing != nil:
			behind = append(behind, fmt.Sprintf("the hub cache of %s has not watched the hub for %s (%v)",
				kindName(in.kind), now.Sub(in.since).Round(time.Millisecond), in.failing))
		case in.open == 0:
			behind = append(behind, fmt.Sprintf("the hub cache of %s has not watched the hub for %s",
				kindName(in.kind), now.Sub(in.since).Round(time.Millisecond)))
		case now.Sub(in.since) < t.settle:
			behind = append(behind, fmt.Sprintf("the hub cache of %s watches the hub again only since %s ago",
				kindName(in.kind), now.Sub(in.since).Round(time.Millisecond)))
		}
	}
	if len(behind) == 0 {
		return nil
	}
	sort.Strings(behind)
	return &BehindError{Reasons: behind}
}

// Watching is nil when a cache of kind has listed the hub and watches it
// now: what it holds is what the hub holds, up to watch latency (no
// settle: a reader that only needs the objects, not what was done with
// them); else an error that says why not, and since when.
func (t *Tracker) Watching(kind schema.GroupKind) error {
	if t == nil {
		return nil
	}
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, in := range t.informers {
		if in.kind != kind {
			continue
		}
		switch {
		case in.open > 0:
			return nil
		case in.failing != nil:
			return &BehindError{Reasons: []string{fmt.Sprintf("the hub cache of %s has not watched the hub for %s (%v)",
				kindName(kind), now.Sub(in.since).Round(time.Millisecond), in.failing)}}
		}
		return &BehindError{Reasons: []string{fmt.Sprintf("the hub cache of %s has not watched the hub for %s",
			kindName(kind), now.Sub(in.since).Round(time.Millisecond))}}
	}
	return &BehindError{Reasons: []string{fmt.Sprintf("no hub cache of %s has started", kindName(kind))}}
}

// BehindError says which hub caches are not known to be current.
type BehindError struct{ Reasons []string }

func (e *BehindError) Error() string {
	more := ""
	if len(e.Reasons) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(e.Reasons)-1)
	}
	return e.Reasons[0] + more + ": what it holds may be behind the hub"
}

// controlPlane says whether gvk is one of Karmada's or federator's own
// kinds (in their API groups, and known to the scheme): never a template,
// its cache counts always, however it is read. A custom resource of a
// user's in a group under karmada.io (Karmada's e2e suite makes them, and
// deletes their CRDs, whose informers then fail for good) is a template.
func (t *Tracker) controlPlane(gvk schema.GroupVersionKind) bool {
	g := gvk.Group
	ours := strings.HasSuffix(g, ".karmada.io") || strings.HasSuffix(g, ".federator.dev")
	return ours && t.scheme != nil && t.scheme.Recognizes(gvk)
}

func contains(kinds []schema.GroupKind, k schema.GroupKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

func kindName(k schema.GroupKind) string {
	if k.Group == "" {
		return k.Kind
	}
	return k.Kind + "." + k.Group
}

func (t *Tracker) opened(in *informer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if in.failing != nil {
		ctrl.Log.WithName("hubwatch").Info("the hub cache watches the hub again", "kind", kindName(in.kind),
			"after", t.clock.Now().Sub(in.since).Round(time.Millisecond).String())
	}
	in.open++
	in.since, in.failing = t.clock.Now(), nil
	if in.broke {
		in.broke = false
		if t.breaks != nil && !t.controlPlaneBroken() {
			t.breaks.Recovered()
		}
	}
}

// controlPlaneBroken says whether a cache of Karmada's or federator's
// kinds broke and does not watch yet.
func (t *Tracker) controlPlaneBroken() bool {
	for _, in := range t.informers {
		if !in.template && in.broke {
			return true
		}
	}
	return false
}

// broken records a break of in's watch.
func (t *Tracker) broken(in *informer) {
	in.broke = true
	if !in.template && t.breaks != nil {
		t.breaks.Break()
	}
}

// listing records a list of in: a relist is a break.
func (t *Tracker) listing(in *informer, err error) {
	t.mu.Lock()
	relist := in.listed
	if err == nil {
		in.listed = true
	}
	t.mu.Unlock()
	if err != nil {
		t.failed(in, err)
		return
	}
	if relist {
		t.mu.Lock()
		t.broken(in)
		t.mu.Unlock()
	}
}

func (t *Tracker) closed(in *informer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in.open--
	if in.open == 0 {
		in.since = t.clock.Now()
	}
}

func (t *Tracker) failed(in *informer, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if in.failing == nil && in.open == 0 {
		ctrl.Log.WithName("hubwatch").Info("warning: the hub cache cannot watch the hub; nothing it decides reaches a member until it does",
			"kind", kindName(in.kind), "error", err.Error())
	}
	in.failing = err
	t.broken(in)
}

// observed is an informer's ListerWatcher, observed.
type observed struct {
	inner    toolscache.ListerWatcherWithContext
	tracker  *Tracker
	informer *informer
}

var _ toolscache.ListerWatcherWithContext = &observed{}

func (o *observed) List(opts metav1.ListOptions) (runtime.Object, error) {
	return o.ListWithContext(context.Background(), opts)
}

func (o *observed) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list, err := o.inner.ListWithContext(ctx, opts)
	o.tracker.listing(o.informer, err)
	return list, err
}

func (o *observed) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return o.WatchWithContext(context.Background(), opts)
}

// WatchWithContext opens the watch and tracks it until its results end.
// A watch that streams its initial list (client-go's WatchListClient,
// off by default) counts as open from the start: the informer has not
// synced before that list ends, and nothing reads an unsynced cache.
func (o *observed) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := o.inner.WatchWithContext(ctx, opts)
	if err != nil {
		o.tracker.failed(o.informer, err)
		return nil, err
	}
	o.tracker.opened(o.informer)
	return newObservedWatch(w, func() { o.tracker.closed(o.informer) }), nil
}

// observedWatch passes on a watch's events and tells when they end.
type observedWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func newObservedWatch(inner watch.Interface, ended func()) *observedWatch {
	w := &observedWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.out)
		defer ended()
		in := inner.ResultChan()
		for {
			select {
			case ev, ok := <-in:
				if !ok {
					return
				}
				select {
				case w.out <- ev:
				case <-w.stop:
					return
				}
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

func (w *observedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *observedWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}
