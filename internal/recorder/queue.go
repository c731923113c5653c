package recorder

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Queue bounds and retries of a queued sink.
const (
	// QueueLimit is how many Events one shard keeps waiting for the hub;
	// beyond it an Event is dropped, counted and logged. At 2,000
	// templates × 10 members a propagation sends about 2,500 per shard.
	QueueLimit = 10000
	// writeTries is how often one Event is written before it is given up
	// (client-go's maxTriesPerEvent).
	writeTries = 12
)

// Drop reasons, as Hooks.Dropped is told them.
const (
	DropQueueFull   = "queue-full"
	DropWriteFailed = "write-failed"
	DropShutdown    = "shutdown"
)

// Hooks tell the caller what a queued sink does, for its metrics; nil
// hooks are not called.
type Hooks struct {
	// Queued is called with +1 when an Event is queued and -1 when it
	// leaves the queue (written, or given up).
	Queued func(delta int)
	// Dropped is called once for each Event that was never written, with
	// why (DropQueueFull, DropWriteFailed, DropShutdown).
	Dropped func(reason string)
}

// queuedSink is a record.EventSink that takes every write at once and
// makes it from its own goroutine, in order.
//
// Why: client-go's broadcaster writes an Event from the goroutine that
// reads its watcher's channel of 1,000, and drops what does not fit while
// that write waits for the hub; under bulk load the hub takes tens of
// milliseconds a write and most of a burst was lost. Queued here, the
// channel is read as fast as Events come, and the only limit is
// QueueLimit, whose drops are counted.
//
// client-go's correlator keeps working as before: it is told each write
// succeeded with the Event it asked for (its name is made on the client,
// so a later count increment patches the right Event), and the writes of
// one shard are made in the order it asked for them, a create before the
// patches that count its repeats. A patch of an Event the hub no longer
// has creates it, as client-go does.
type queuedSink struct {
	next  record.EventSink
	hooks Hooks
	limit int
	// sleep is the wait before a failed write is tried again.
	sleep time.Duration

	mu      sync.Mutex
	pending []write
	wake    chan struct{}
	stopped bool
	done    chan struct{}
}

type write struct {
	event *corev1.Event
	patch []byte // set for a patch
}

func newQueuedSink(next record.EventSink, limit int, hooks Hooks) *queuedSink {
	s := &queuedSink{next: next, hooks: hooks, limit: limit, sleep: time.Second,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *queuedSink) Create(e *corev1.Event) (*corev1.Event, error) {
	s.push(write{event: e})
	return e, nil
}

// Update is not called by client-go's recorder (it patches repeats); it is
// made as a create would be.
func (s *queuedSink) Update(e *corev1.Event) (*corev1.Event, error) {
	s.push(write{event: e})
	return e, nil
}

func (s *queuedSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	s.push(write{event: e, patch: data})
	return e, nil
}

func (s *queuedSink) push(w write) {
	w.event = w.event.DeepCopy()
	s.mu.Lock()
	switch {
	case s.stopped:
		s.mu.Unlock()
		s.dropped(w, DropShutdown)
		return
	case len(s.pending) >= s.limit:
		s.mu.Unlock()
		s.dropped(w, DropQueueFull)
		return
	}
	s.pending = append(s.pending, w)
	s.mu.Unlock()
	if s.hooks.Queued != nil {
		s.hooks.Queued(1)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// dropLog limits the log of dropped Events to one line in this many (the
// first always), so a hub that is away for long does not flood the log.
const dropLog = 1000

var dropCount struct {
	sync.Mutex
	n int
}

func (s *queuedSink) dropped(w write, reason string) {
	if s.hooks.Dropped != nil {
		s.hooks.Dropped(reason)
	}
	dropCount.Lock()
	n := dropCount.n
	dropCount.n++
	dropCount.Unlock()
	if n%dropLog == 0 {
		klog.Background().Error(nil, "Event dropped, not written to the hub (federator_events_dropped_total counts them all)",
			"reason", reason, "object", w.event.InvolvedObject, "eventReason", w.event.Reason, "dropped", n+1)
	}
}

// stop ends the writer: it writes what is queued until ctx ends, and
// drops the rest (a write in flight then ends on its own, with the
// client's timeout).
func (s *queuedSink) stop(ctx context.Context) {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		s.mu.Lock()
		rest := s.pending
		s.pending = nil
		s.mu.Unlock()
		for _, w := range rest {
			s.left(w, DropShutdown)
		}
	}
}

func (s *queuedSink) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		if len(s.pending) == 0 {
			stopped := s.stopped
			s.mu.Unlock()
			if stopped {
				return
			}
			<-s.wake
			continue
		}
		w := s.pending[0]
		s.pending[0] = write{}
		s.pending = s.pending[1:]
		s.mu.Unlock()
		if s.writeWithRetries(w) {
			s.left(w, "")
		} else {
			s.left(w, DropWriteFailed)
		}
	}
}

// left is called once an Event leaves the queue; reason says why it was
// not written ("" when it was).
func (s *queuedSink) left(w write, reason string) {
	if s.hooks.Queued != nil {
		s.hooks.Queued(-1)
	}
	if reason != "" {
		s.dropped(w, reason)
	}
}

// writeWithRetries writes w as client-go's recorder does, trying again
// after errors that may pass (the hub unreachable) up to writeTries times,
// and reports whether the hub has the Event.
func (s *queuedSink) writeWithRetries(w write) bool {
	for try := 1; ; try++ {
		err := s.write(w)
		if err == nil {
			return true
		}
		if !retriable(err) {
			if apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return true // the hub has it, or will never take it: as client-go, not a loss to report
			}
			klog.Background().Error(err, "Server rejected event (will not retry!)", "object", w.event.InvolvedObject, "reason", w.event.Reason)
			return false
		}
		s.mu.Lock()
		stopped := s.stopped
		s.mu.Unlock()
		if try >= writeTries || stopped {
			klog.Background().Error(err, "Unable to write event (retry limit exceeded!)", "object", w.event.InvolvedObject, "reason", w.event.Reason)
			return false
		}
		time.Sleep(s.sleep)
	}
}

func (s *queuedSink) write(w write) error {
	if w.patch != nil {
		_, err := s.next.Patch(w.event, w.patch)
		if !apierrors.IsNotFound(err) {
			return err
		}
	}
	e := w.event.DeepCopy()
	e.ResourceVersion = ""
	_, err := s.next.Create(e)
	return err
}

// retriable is client-go's recordEvent's rule: a request that cannot be
// built, or that the hub answered with a status, is not tried again;
// anything else (a transport error) is.
func retriable(err error) bool {
	var construction *rest.RequestConstructionError
	var status *apierrors.StatusError
	return !errors.As(err, &construction) && !errors.As(err, &status)
}
