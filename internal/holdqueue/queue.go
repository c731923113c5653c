package holdqueue

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/federator-dev/federator/internal/holdwrites"
)

// Watched is a controller's priority queue seen from the hold path: it
// times every hold change from its Add to the worker that takes it, saying
// whether it waited behind a reconcile of the same object already in
// flight (a workqueue never hands out one key twice at once) or for a free
// worker. And it makes the reconcile in its way give way (the Turn of
// internal/holdwrites): the one of the same object, whose queued bulk writes
// are stale (the pass after it decides afresh); or, when every worker is
// busy, one ordinary reconcile waiting for a bulk write slot, which comes
// back later: a priority queue orders what waits for a worker, but a hold
// change still needs a worker to come free, and workers wait for the
// hub's bulk slots (measured by make bench-fleet: hold changes waited
// 160 ms on average for a worker, a third of them over 250 ms).
//
// Set a controller's Options.NewQueue to NewQueue; its priority queue is
// controller-runtime's.
type Watched[T comparable] struct {
	// Observe, when set, is told how long each hold change waited, and
	// whether behind its own object's reconcile.
	Observe func(controller string, wait time.Duration, sameObject bool)
	// Workers is the controller's MaxConcurrentReconciles: with that many
	// reconciles in flight, a hold change makes one ordinary reconcile
	// that waits for a bulk slot give way. 0 never does.
	Workers int

	mu      sync.Mutex
	name    string
	queue   priorityqueue.PriorityQueue[T]
	added   map[T]pendingHold
	running map[T]*inFlight
	// unsettled: the hold changes taken in and not yet written, since
	// their first add (Deciding).
	unsettled map[T]time.Time
}

type pendingHold struct {
	at         time.Time
	sameObject bool
}

// inFlight is one reconcile's Turn (internal/holdwrites).
type inFlight struct {
	giveWay chan struct{}
	told    bool
	// hold: the reconcile was taken at Hold priority; it never gives way
	// to another object's hold change.
	hold bool
	// waiting counts its writes waiting for a bulk slot now.
	waiting atomic.Int32
	// retry: the reconcile, taken at Hold priority, is retried (it failed,
	// or found the cache behind): its hold change is not written yet.
	retry bool
}

func (f *inFlight) GiveWay() <-chan struct{} { return f.giveWay }
func (f *inFlight) Waiting(delta int)        { f.waiting.Add(int32(delta)) }

// tell makes f give way, once.
func (f *inFlight) tell() {
	if !f.told {
		f.told = true
		close(f.giveWay)
	}
}

// NewWatched returns a Watched with nothing queued yet.
func NewWatched[T comparable]() *Watched[T] {
	return &Watched[T]{added: map[T]pendingHold{}, running: map[T]*inFlight{}, unsettled: map[T]time.Time{}}
}

// NewQueue is a controller's Options.NewQueue: controller-runtime's
// priority queue with rateLimiter, seen through w.
func (w *Watched[T]) NewQueue(name string, rateLimiter workqueue.TypedRateLimiter[T]) workqueue.TypedRateLimitingInterface[T] {
	q := priorityqueue.New(name, func(o *priorityqueue.Opts[T]) { o.RateLimiter = rateLimiter })
	w.mu.Lock()
	w.name, w.queue = name, q
	w.mu.Unlock()
	return &watchedQueue[T]{PriorityQueue: q, w: w}
}

// Later queues item again after d, whatever its reconcile returns: a
// reconcile that failed is retried with the queue's backoff, which
// controller-runtime uses instead of the RequeueAfter it returned, and
// can grow to minutes; Later keeps a time that matters (a gate's window
// starting) on time. The earlier of the two wins. Nothing before NewQueue.
func (w *Watched[T]) Later(item T, d time.Duration) {
	w.mu.Lock()
	q := w.queue
	w.mu.Unlock()
	if q != nil && d > 0 {
		q.AddWithOpts(priorityqueue.AddOpts{After: d}, item)
	}
}

// Turn is the Turn of item's reconcile in flight (holdwrites.WithTurn); nil
// when item is not in flight.
func (w *Watched[T]) Turn(item T) holdwrites.Turn {
	w.mu.Lock()
	defer w.mu.Unlock()
	if f, ok := w.running[item]; ok {
		return f
	}
	return nil
}

func (w *Watched[T]) holdAdded(items []T) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, item := range items {
		f, running := w.running[item]
		if _, ok := w.added[item]; !ok {
			w.added[item] = pendingHold{at: now, sameObject: running}
		}
		if _, ok := w.unsettled[item]; !ok {
			w.unsettled[item] = now
		}
		switch {
		case running:
			f.tell()
		case w.Workers > 0 && len(w.running) >= w.Workers:
			w.freeAWorker()
		}
	}
}

// freeAWorker tells one ordinary reconcile that waits for a bulk slot to
// give way, if one does.
func (w *Watched[T]) freeAWorker() {
	for _, f := range w.running {
		if !f.hold && !f.told && f.waiting.Load() > 0 {
			f.tell()
			return
		}
	}
}

func (w *Watched[T]) taken(item T, priority int) {
	w.mu.Lock()
	p, hold := w.added[item]
	delete(w.added, item)
	w.running[item] = &inFlight{giveWay: make(chan struct{}), hold: hold || priority >= Hold}
	name, observe := w.name, w.Observe
	w.mu.Unlock()
	if hold && observe != nil {
		observe(name, time.Since(p.at), p.sameObject)
	}
}

func (w *Watched[T]) done(item T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.running[item]
	delete(w.running, item)
	_, again := w.added[item]
	switch {
	case !again && (f == nil || !f.retry):
		delete(w.unsettled, item)
	case f != nil && f.retry:
		// The pass failed and waits for its retry: the patience counts
		// from now, not from a pass that was slow to fail.
		if _, ok := w.unsettled[item]; ok {
			w.unsettled[item] = time.Now()
		}
	}
}

// retried records that item's reconcile in flight, taken at Hold
// priority, is queued again with the queue's backoff.
func (w *Watched[T]) retried(items []T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, item := range items {
		if f, ok := w.running[item]; ok && f.hold {
			f.retry = true
		}
	}
}

// DecidingPatience bounds how long Deciding reports a hold change while
// no pass of it is in flight: from its add, or from the end of its last
// pass, which failed. One whose pass keeps failing says why itself (its
// object's conditions), and does not hold back what waits on it for ever.
// A pass in flight is reported however long it takes: under load the
// hub answers its write late, and what waits on it would otherwise write
// the release that write withdraws.
var DecidingPatience = 30 * time.Second

// Deciding reports whether a hold change of an item that match accepts
// is taken in and not yet written: added at Hold priority, and no pass
// of it since has ended without being retried (one that failed, or found
// its cache behind, is). A pass in flight counts whatever
// DecidingPatience. A dispatcher asks before it writes a release to a
// member: a hold change on its way (a suspension set just now, whose pass
// is slow under load) withdraws that release. Hold changes are few, so
// this looks at each.
func (w *Watched[T]) Deciding(match func(T) bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for item, since := range w.unsettled {
		if _, inFlight := w.running[item]; !inFlight && time.Since(since) >= DecidingPatience {
			// Kept until a pass of it ends well (done): its retry, in
			// flight, is reported again.
			continue
		}
		if match(item) {
			return true
		}
	}
	return false
}

// watchedQueue is the priority queue with w told of hold adds, of items
// handed out and of items done.
type watchedQueue[T comparable] struct {
	priorityqueue.PriorityQueue[T]
	w *Watched[T]
}

func (q *watchedQueue[T]) AddWithOpts(o priorityqueue.AddOpts, items ...T) {
	// A hold change is an Add at Hold priority now; a retry of one
	// (rate-limited or later) is the queue's own business.
	switch p := ptr.Deref(o.Priority, 0); {
	case p >= Hold && !o.RateLimited && o.After == 0:
		q.w.holdAdded(items)
	case p >= Hold && o.RateLimited:
		// controller-runtime's retry of a pass that failed, at the
		// priority it was taken at.
		q.w.retried(items)
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

func (q *watchedQueue[T]) GetWithPriority() (T, int, bool) {
	item, p, shutdown := q.PriorityQueue.GetWithPriority()
	if !shutdown {
		q.w.taken(item, p)
	}
	return item, p, shutdown
}

func (q *watchedQueue[T]) Get() (T, bool) {
	item, shutdown := q.PriorityQueue.Get()
	if !shutdown {
		q.w.taken(item, 0)
	}
	return item, shutdown
}

func (q *watchedQueue[T]) Done(item T) {
	q.w.done(item)
	q.PriorityQueue.Done(item)
}
