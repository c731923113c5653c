package recorder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// A burst far beyond client-go's 1,000 queued Events, all through one
// shard, is written in full: the queue takes it while the hub is slow.
// (Emitted 20 per millisecond: a controller's Events follow its writes;
// faster still, client-go's own channel in front of the sink overflows.)
func TestABurstThroughOneShardWaitsInsteadOfBeingDropped(t *testing.T) {
	const n = 6000
	if _, got := burst(t, NewBroadcaster(1, 0, Hooks{}), n, time.Millisecond); got >= n {
		t.Fatalf("without a queue (--event-queue-limit=0) one shard wrote all %d Events: the burst is too small to test anything", n)
	} else {
		t.Logf("without a queue one shard wrote %d of %d Events", got, n)
	}
	var dropped atomic.Int64
	sink, got := burst(t, NewBroadcaster(1, QueueLimit, Hooks{Dropped: func(string) { dropped.Add(1) }}), n, time.Millisecond)
	if got != n {
		t.Fatalf("one shard wrote %d of %d Events (%d counted as dropped); want every one", got, n, dropped.Load())
	}
	for obj, c := range sink.objects {
		if c != 1 {
			t.Errorf("%s: %d Events written, want 1", obj, c)
		}
	}
	if dropped.Load() != 0 {
		t.Errorf("%d Events counted as dropped, want 0", dropped.Load())
	}
}

// scriptedSink answers each write with the next error of its script (nil
// once it runs out), and keeps what it stored, in order.
type scriptedSink struct {
	mu      sync.Mutex
	script  []error
	gate    chan struct{} // when set, every write waits for a value
	stored  []string      // "create NAME count" or "patch NAME count"
	tries   int
	missing map[string]bool // names the hub does not have: a patch of one is NotFound
}

func (s *scriptedSink) answer(op string, e *corev1.Event) error {
	if s.gate != nil {
		<-s.gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tries++
	if op == "patch" && s.missing[e.Name] {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "events"}, e.Name)
	}
	if len(s.script) > 0 {
		err := s.script[0]
		s.script = s.script[1:]
		if err != nil {
			return err
		}
	}
	s.stored = append(s.stored, fmt.Sprintf("%s %s %d", op, e.Name, e.Count))
	delete(s.missing, e.Name)
	return nil
}

func (s *scriptedSink) Create(e *corev1.Event) (*corev1.Event, error) {
	return e, s.answer("create", e)
}
func (s *scriptedSink) Update(e *corev1.Event) (*corev1.Event, error) {
	return e, s.answer("update", e)
}
func (s *scriptedSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	return e, s.answer("patch", e)
}
func (s *scriptedSink) writes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.stored...)
}

func event(name string, count int32) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: name, ResourceVersion: "7"}, Count: count,
		InvolvedObject: corev1.ObjectReference{Kind: "Work", Namespace: "karmada-es-member1", Name: "web"}, Reason: "WorkDispatching"}
}

func eventually(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestQueuedSinkWritesInOrderAndCreatesAPatchedEventTheHubLost(t *testing.T) {
	next := &scriptedSink{missing: map[string]bool{"web.2": true}}
	var queued atomic.Int64
	q := newQueuedSink(next, 10, Hooks{Queued: func(d int) { queued.Add(int64(d)) }})
	defer q.stop(context.Background())
	_, _ = q.Create(event("web.1", 1))
	_, _ = q.Patch(event("web.1", 2), []byte(`{"count":2}`))
	_, _ = q.Patch(event("web.2", 3), []byte(`{"count":3}`))
	want := []string{"create web.1 1", "patch web.1 2", "create web.2 3"}
	eventually(t, "every write made", func() bool { return len(next.writes()) == len(want) })
	if got := next.writes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("writes %q, want %q", got, want)
	}
	eventually(t, "the queue empty", func() bool { return queued.Load() == 0 })
}

func TestQueuedSinkRetriesTheHubBeingAwayAndCountsWhatItGivesUp(t *testing.T) {
	away := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	rejected := apierrors.NewBadRequest("event.involvedObject: Invalid value")
	next := &scriptedSink{script: []error{away, away, nil, rejected}}
	dropped := map[string]int{}
	var mu sync.Mutex
	q := newQueuedSink(next, 10, Hooks{Dropped: func(r string) { mu.Lock(); dropped[r]++; mu.Unlock() }})
	q.sleep = time.Millisecond
	defer q.stop(context.Background())
	_, _ = q.Create(event("web.1", 1))
	_, _ = q.Create(event("web.2", 1))
	eventually(t, "both Events tried", func() bool { next.mu.Lock(); defer next.mu.Unlock(); return next.tries == 4 })
	if got := next.writes(); fmt.Sprint(got) != "[create web.1 1]" {
		t.Errorf("writes %q, want web.1 written after two failures", got)
	}
	eventually(t, "the rejected Event counted", func() bool { mu.Lock(); defer mu.Unlock(); return dropped[DropWriteFailed] == 1 })
}

func TestQueuedSinkDropsPastItsLimitAndSaysSo(t *testing.T) {
	next := &scriptedSink{gate: make(chan struct{})}
	var full atomic.Int64
	q := newQueuedSink(next, 2, Hooks{Dropped: func(r string) {
		if r == DropQueueFull {
			full.Add(1)
		}
	}})
	// The first is taken by the writer (stuck in the hub), two wait, the
	// rest do not fit.
	_, _ = q.Create(event("web.0", 1))
	eventually(t, "the writer busy", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.pending) == 0 })
	for i := 1; i <= 5; i++ {
		_, _ = q.Create(event(fmt.Sprint("web.", i), 1))
	}
	if full.Load() != 3 {
		t.Errorf("%d Events counted as dropped for a full queue, want 3", full.Load())
	}
	close(next.gate)
	q.stop(context.Background())
	if got := next.writes(); fmt.Sprint(got) != "[create web.0 1 create web.1 1 create web.2 1]" {
		t.Errorf("writes %q, want the three that fit, in order", got)
	}
}

func TestShutdownWritesWhatIsQueuedThenDropsTheRest(t *testing.T) {
	next := &scriptedSink{gate: make(chan struct{})}
	var shutdown atomic.Int64
	b := NewBroadcaster(1, QueueLimit, Hooks{Dropped: func(r string) {
		if r == DropShutdown {
			shutdown.Add(1)
		}
	}})
	b.StartRecordingToSink(next)
	r := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "execution-controller"})
	for i := range 4 {
		r.Event(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: fmt.Sprint("web-", i), UID: "u"}}, corev1.EventTypeNormal, "WorkDispatching", "m")
	}
	eventually(t, "the four queued", func() bool {
		q := b.sinks[0]
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.pending) == 3 // the first is in the writer, stuck in the hub
	})
	// The hub takes two, then hangs on the third: the fourth is still
	// queued when the drain ends.
	go func() { next.gate <- struct{}{}; next.gate <- struct{}{} }()
	began := time.Now()
	b.Shutdown()
	if took := time.Since(began); took > ShutdownDrain+time.Second {
		t.Errorf("Shutdown took %s with the hub hanging; want about %s", took, ShutdownDrain)
	}
	if got := len(next.writes()); got != 2 {
		t.Errorf("%d Events written before the hub hung, want 2", got)
	}
	if shutdown.Load() != 1 {
		t.Errorf("%d Events counted as dropped at shutdown, want 1", shutdown.Load())
	}
	close(next.gate) // the write in flight ends: written, not counted as dropped
	eventually(t, "the write in flight made", func() bool { return len(next.writes()) == 3 })
	if shutdown.Load() != 1 {
		t.Errorf("%d Events counted as dropped at shutdown once the hub answered, want 1", shutdown.Load())
	}
}
