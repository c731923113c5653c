package holdqueue

import (
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

type waited struct {
	controller string
	sameObject bool
}

func newWatchedQueue(t *testing.T) (*Watched[string], priorityqueue.PriorityQueue[string], *[]waited) {
	t.Helper()
	w := NewWatched[string]()
	var seen []waited
	w.Observe = func(controller string, _ time.Duration, sameObject bool) {
		seen = append(seen, waited{controller, sameObject})
	}
	q := w.NewQueue("binding", workqueue.DefaultTypedItemBasedRateLimiter[string]())
	t.Cleanup(q.ShutDown)
	pq, ok := q.(priorityqueue.PriorityQueue[string])
	if !ok {
		t.Fatal("the watched queue is not a priority queue: controller-runtime would wrap it and lose priorities")
	}
	return w, pq, &seen
}

// A hold change of an object whose reconcile is in flight tells that
// reconcile to give way, and is timed as waiting behind it.
func TestWatchedHoldBehindItsOwnReconcile(t *testing.T) {
	w, q, seen := newWatchedQueue(t)
	q.Add("web")
	item, _, _ := q.GetWithPriority()
	turn := w.Turn(item)
	if turn == nil {
		t.Fatal("no turn for a reconcile in flight")
	}
	giveWay := turn.GiveWay()
	if w.Turn("other") != nil {
		t.Error("a turn for an object not in flight")
	}
	select {
	case <-giveWay:
		t.Fatal("told to give way before any hold change")
	default:
	}
	Add(q, Hold, "web")
	Add(q, Hold, "web") // told once, timed once
	select {
	case <-giveWay:
	default:
		t.Fatal("a hold change of the object in flight did not tell its reconcile to give way")
	}
	q.Done(item)
	if got, p, _ := q.GetWithPriority(); got != "web" || p != Hold {
		t.Fatalf("next: %s at %d, want web at Hold", got, p)
	}
	if len(*seen) != 1 || (*seen)[0] != (waited{"binding", true}) {
		t.Errorf("observed %+v, want one wait behind the same object, in controller binding", *seen)
	}
}

// A hold change of an object not in flight waits for a worker; ordinary
// adds and retries are not timed and tell nobody to give way.
func TestWatchedHoldForAWorker(t *testing.T) {
	w, q, seen := newWatchedQueue(t)
	q.Add("bulk")
	bulk, _, _ := q.GetWithPriority()
	giveWay := w.Turn(bulk).GiveWay()
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(Hold), RateLimited: true}, "bulk")
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(0)}, "bulk")
	select {
	case <-giveWay:
		t.Fatal("an ordinary add or a retry told the reconcile to give way")
	default:
	}
	Add(q, Hold, "frozen")
	if got, _, _ := q.GetWithPriority(); got != "frozen" {
		t.Fatalf("next: %s, want frozen", got)
	}
	if len(*seen) != 1 || (*seen)[0] != (waited{"binding", false}) {
		t.Errorf("observed %+v, want one wait for a worker", *seen)
	}
}

// With every worker busy, a hold change makes one ordinary reconcile that
// waits for a bulk slot give way, never a hold reconcile nor one that
// waits for nothing.
func TestWatchedHoldFreesAWorker(t *testing.T) {
	w, q, _ := newWatchedQueue(t)
	w.Workers = 3
	told := func(item string) bool {
		select {
		case <-w.Turn(item).GiveWay():
			return true
		default:
			return false
		}
	}
	q.Add("computing")
	q.Add("queued-for-a-slot")
	Add(q, Hold, "held")
	taken := map[string]bool{}
	for range 3 {
		item, _, _ := q.GetWithPriority()
		taken[item] = true
	}
	if len(taken) != 3 {
		t.Fatalf("taken %v, want three reconciles in flight", taken)
	}
	w.Turn("held").Waiting(1)
	w.Turn("queued-for-a-slot").Waiting(1)
	Add(q, Hold, "frozen")
	if !told("queued-for-a-slot") {
		t.Error("the ordinary reconcile waiting for a bulk slot was not told to give way")
	}
	if told("computing") || told("held") {
		t.Error("a reconcile waiting for no slot, or a hold reconcile, was told to give way")
	}
	// Nothing else to free: the next hold change waits for a worker.
	Add(q, Hold, "frozen-too")
	if told("computing") || told("held") {
		t.Error("a second hold change made a reconcile give way that waits for no slot, or holds")
	}
	// With a worker free, nobody gives way.
	q.Done("computing")
	turn := w.Turn("held").(*inFlight)
	turn.hold = false // were it ordinary and waiting, it still has no reason to
	Add(q, Hold, "frozen-three")
	if told("held") {
		t.Error("a reconcile gave way although a worker was free")
	}
}

// A hold change is being decided from its add until a pass of it ends
// without being retried: queued, in flight, and retried after a failure
// all count; an ordinary change never does, nor one past the patience.
func TestWatchedDeciding(t *testing.T) {
	w, q, _ := newWatchedQueue(t)
	is := func(want string) func(string) bool { return func(s string) bool { return s == want } }
	deciding := func(item string) bool { return w.Deciding(is(item)) }

	q.Add("bulk")
	if deciding("bulk") {
		t.Error("an ordinary change counts as a hold being decided")
	}
	Add(q, Hold, "web")
	if !deciding("web") || deciding("other") {
		t.Fatalf("queued hold change: deciding(web)=%v deciding(other)=%v, want true, false", deciding("web"), deciding("other"))
	}
	item, p, _ := q.GetWithPriority()
	if item != "web" || p != Hold {
		t.Fatalf("took %s at %d, want web at %d", item, p, Hold)
	}
	if !deciding("web") {
		t.Error("a hold change in flight is not being decided")
	}
	// The pass fails: controller-runtime queues it again, rate-limited,
	// at the priority it was taken at.
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true, Priority: ptr.To(p)}, item)
	q.Done(item)
	if !deciding("web") {
		t.Fatal("a hold change whose pass failed and is retried is no longer being decided")
	}
	// The retry comes after its backoff: the ordinary change first.
	bulk, _, _ := q.GetWithPriority()
	item, _, _ = q.GetWithPriority()
	q.Done(item)
	if item != "web" || deciding("web") {
		t.Errorf("a hold change whose pass (of %s) ended is still being decided", item)
	}

	// A pass in flight of an ordinary change, ending: a hold change added
	// meanwhile waits for the next pass.
	Add(q, Hold, bulk)
	q.Done(bulk)
	if !deciding(bulk) {
		t.Error("a hold change added while an ordinary pass ran was settled by it")
	}

	defer func(p time.Duration) { DecidingPatience = p }(DecidingPatience)
	DecidingPatience = 0
	if deciding(bulk) {
		t.Error("a hold change past the patience, no pass of it in flight, is still reported")
	}

	// A pass in flight past the patience (the hub answers its write late)
	// is reported until it ends; when it fails, its retry is again.
	item, _, _ = q.GetWithPriority()
	if item != bulk || !deciding(bulk) {
		t.Fatalf("took %s: a hold change whose pass is in flight past the patience is not reported", item)
	}
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true, Priority: ptr.To(Hold)}, item)
	q.Done(item)
	DecidingPatience = time.Hour
	if !deciding(bulk) {
		t.Error("a hold change whose slow pass failed is not reported while its retry waits, within the patience")
	}
	DecidingPatience = 0
	item, _, _ = q.GetWithPriority()
	if !deciding(item) {
		t.Error("the retry in flight of a hold change past the patience is not reported")
	}
	q.Done(item)
	if deciding(item) {
		t.Error("a hold change whose pass ended well is still reported")
	}
}

// A pass taken at Hold priority that no hold change added (a later
// requeue at that priority) and that fails is not a hold change being
// decided: only hold changes taken in are reported.
func TestWatchedDecidingOnlyHoldChangesTakenIn(t *testing.T) {
	w, q, _ := newWatchedQueue(t)
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(Hold), After: time.Millisecond}, "later")
	item, p, _ := q.GetWithPriority()
	if item != "later" || p != Hold {
		t.Fatalf("took %s at %d, want later at %d", item, p, Hold)
	}
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true, Priority: ptr.To(p)}, item)
	q.Done(item)
	if w.Deciding(func(s string) bool { return s == "later" }) {
		t.Error("a failed pass that no hold change added is reported as a hold change being decided")
	}
}
