// Package recorder owns how the controllers' Kubernetes Events reach the
// hub: through several client-go event broadcasters instead of one, each
// object's Events always through the same broadcaster.
//
// Why: client-go's broadcaster (k8s.io/client-go/tools/record) writes its
// Events one at a time from one goroutine and queues at most 1,000 (then
// 1,000 more per watcher); what does not fit is dropped without a word.
// During bulk propagation that one goroutine's writes wait in the hub's
// bulk lane (internal/holdwrites) behind every other controller's, and at 2,000
// templates × 10 members only 0.12 of the 10 WorkDispatching Events per
// template were written (docs/performance.md): Events Karmada's own e2e
// and users' scripts wait for. Shards write in parallel and queue
// Shards times as many. Each object's Events go through one shard, so
// client-go's correlation (counting repeats, aggregating similar Events,
// its spam filter) sees all of an object's Events in order, as before.
// Each shard writes through its own queue (queuedSink): client-go's
// broadcaster drops a burst beyond the 1,000 Events its channel holds
// while its one write waits for a busy hub (at 2,000 × 10, through 16
// shards, the hub stored 0.74 of the 2 "Dispatching" WorkDispatching
// Events sent per Work). Queued, every Event is written, in order, late
// rather than never; past QueueLimit waiting in one shard, or given up
// after retries, it is dropped, counted (Hooks.Dropped:
// federator_events_dropped_total) and logged.
package recorder

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Shards is how many broadcasters a Broadcaster runs: enough that Events
// keep a share of the hub's bulk writes while every worker writes
// (internal/holdwrites.DefaultBulkWrites are in flight at once).
const Shards = 16

// Broadcaster is a record.EventBroadcaster made of shards client-go
// broadcasters; an object's Events always go through the same one.
type Broadcaster struct {
	shards []record.EventBroadcaster
	limit  int
	hooks  Hooks
	mu     sync.Mutex
	sinks  []*queuedSink
}

var _ record.EventBroadcaster = (*Broadcaster)(nil)

// NewBroadcaster returns a Broadcaster of n client-go broadcasters, each
// made with opts (n < 1 makes one), each shard queueing up to limit
// Events for the hub (0: no queue, client-go's own behaviour); hooks are
// told what its queues hold and drop.
func NewBroadcaster(n, limit int, hooks Hooks, opts ...record.BroadcasterOption) *Broadcaster {
	b := &Broadcaster{shards: make([]record.EventBroadcaster, max(n, 1)), limit: limit, hooks: hooks}
	for i := range b.shards {
		b.shards[i] = record.NewBroadcaster(opts...)
	}
	return b
}

// each starts a watcher on every shard and returns one watch that stops
// them all.
func (b *Broadcaster) each(start func(record.EventBroadcaster) watch.Interface) watch.Interface {
	w := make(watches, len(b.shards))
	for i, s := range b.shards {
		w[i] = start(s)
	}
	return w
}

// StartEventWatcher passes every Event, of any shard, to eventHandler
// (from one goroutine per shard).
func (b *Broadcaster) StartEventWatcher(eventHandler func(*corev1.Event)) watch.Interface {
	return b.each(func(s record.EventBroadcaster) watch.Interface { return s.StartEventWatcher(eventHandler) })
}

// StartRecordingToSink writes every shard's Events to sink, each shard
// with its own correlator and its own queue and writer (queuedSink), so
// a burst waits for the hub instead of being dropped.
func (b *Broadcaster) StartRecordingToSink(sink record.EventSink) watch.Interface {
	return b.each(func(s record.EventBroadcaster) watch.Interface {
		if b.limit <= 0 {
			return s.StartRecordingToSink(sink)
		}
		q := newQueuedSink(sink, b.limit, b.hooks)
		b.mu.Lock()
		b.sinks = append(b.sinks, q)
		b.mu.Unlock()
		return s.StartRecordingToSink(q)
	})
}

// StartLogging passes every Event to logf.
func (b *Broadcaster) StartLogging(logf func(format string, args ...interface{})) watch.Interface {
	return b.each(func(s record.EventBroadcaster) watch.Interface { return s.StartLogging(logf) })
}

// StartStructuredLogging logs every Event at verbosity.
func (b *Broadcaster) StartStructuredLogging(verbosity klog.Level) watch.Interface {
	return b.each(func(s record.EventBroadcaster) watch.Interface { return s.StartStructuredLogging(verbosity) })
}

// NewRecorder returns a recorder that sends each object's Events through
// that object's shard, as source.
func (b *Broadcaster) NewRecorder(scheme *runtime.Scheme, source corev1.EventSource) record.EventRecorderLogger {
	r := recorder{shards: make([]record.EventRecorderLogger, len(b.shards))}
	for i, s := range b.shards {
		r.shards[i] = s.NewRecorder(scheme, source)
	}
	return r
}

// ShutdownDrain is how long Shutdown keeps writing the Events still
// queued; what is left then is dropped, and counted.
const ShutdownDrain = 2 * time.Second

// Shutdown shuts every shard down, writing what is still queued for up to
// ShutdownDrain.
func (b *Broadcaster) Shutdown() {
	for _, s := range b.shards {
		s.Shutdown()
	}
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownDrain)
	defer cancel()
	b.mu.Lock()
	sinks := b.sinks
	b.sinks = nil
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, q := range sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.stop(ctx)
		}()
	}
	wg.Wait()
}

// recorder picks an object's shard by its namespace and name.
type recorder struct {
	shards []record.EventRecorderLogger
}

func (r recorder) of(object runtime.Object) record.EventRecorderLogger {
	return r.shards[Shard(object, len(r.shards))]
}

func (r recorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.of(object).Event(object, eventtype, reason, message)
}

func (r recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.of(object).Eventf(object, eventtype, reason, messageFmt, args...)
}

func (r recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	r.of(object).AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
}

func (r recorder) WithLogger(logger klog.Logger) record.EventRecorderLogger {
	out := recorder{shards: make([]record.EventRecorderLogger, len(r.shards))}
	for i, s := range r.shards {
		out.shards[i] = s.WithLogger(logger)
	}
	return out
}

// Shard is the shard, of n, that object's Events go through: the same for
// the same namespace and name, whatever the object's kind (an
// ObjectReference counts as the object it refers to).
func Shard(object runtime.Object, n int) int {
	if n <= 1 {
		return 0
	}
	var ns, name string
	if ref, ok := object.(*corev1.ObjectReference); ok {
		ns, name = ref.Namespace, ref.Name
	} else if m, err := meta.Accessor(object); err == nil {
		ns, name = m.GetNamespace(), m.GetName()
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(ns))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(name))
	return int(h.Sum32() % uint32(n))
}

// watches stops a watcher on each shard as one. Their Events go to the
// handlers they were started with, so ResultChan has none of its own.
type watches []watch.Interface

func (w watches) Stop() {
	for _, x := range w {
		x.Stop()
	}
}

func (w watches) ResultChan() <-chan watch.Event { return nil }

// Manager is a controller manager whose GetEventRecorderFor records
// through Events, a Broadcaster: the controllers set up with it send their
// Events there. Everything else is the manager's; its own recorders (leader
// election's) stay on its own broadcaster.
type Manager struct {
	manager.Manager
	Events *Broadcaster
}

// GetEventRecorderFor returns a recorder of Events from name.
func (m Manager) GetEventRecorderFor(name string) record.EventRecorder {
	return m.Events.NewRecorder(m.GetScheme(), corev1.EventSource{Component: name})
}

// Start writes b's Events to the hub cfg and httpClient reach (through the
// same transport as the manager's writes), and logs each at V(1) to log, as
// controller-runtime does with its own. It returns at once; b.Shutdown ends
// it.
func Start(b *Broadcaster, cfg *rest.Config, httpClient *http.Client, log logr.Logger) error {
	c, err := corev1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("events client: %w", err)
	}
	b.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: c.Events("")})
	b.StartEventWatcher(func(e *corev1.Event) {
		log.V(1).Info(e.Message, "type", e.Type, "object", e.InvolvedObject, "reason", e.Reason)
	})
	return nil
}
