package recorder

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
)

// slowSink stores Events as a hub API server under load would: each write
// takes a while.
type slowSink struct {
	delay   time.Duration
	written atomic.Int64
	mu      sync.Mutex
	objects map[string]int // involved object → Events written about it
}

func (s *slowSink) Create(e *corev1.Event) (*corev1.Event, error) {
	time.Sleep(s.delay)
	s.mu.Lock()
	s.objects[e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name]++
	s.mu.Unlock()
	s.written.Add(1)
	return e, nil
}
func (s *slowSink) Update(e *corev1.Event) (*corev1.Event, error) { return s.Create(e) }
func (s *slowSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	return s.Create(e)
}

// burst emits one Event about each of n objects as fast as a busy
// controller would (a pause of pace after every 20, when pace is set),
// through b, and returns how many the sink stored once it stopped storing
// more.
func burst(t *testing.T, b record.EventBroadcaster, n int, pace time.Duration) (*slowSink, int64) {
	t.Helper()
	sink := &slowSink{delay: time.Millisecond, objects: map[string]int{}}
	b.StartRecordingToSink(sink)
	defer b.Shutdown()
	r := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "execution-controller"})
	for i := range n {
		w := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("karmada-es-member%d", i%10), Name: fmt.Sprintf("web-%d", i), UID: "u"}}
		r.Event(w, corev1.EventTypeNormal, "WorkDispatching", "Work is being dispatched to member clusters.")
		if pace > 0 && i%20 == 19 {
			time.Sleep(pace)
		}
	}
	// Wait until every Event is stored, or none was stored for a second:
	// the rest were dropped.
	last, still := int64(-1), time.Now()
	for {
		got := sink.written.Load()
		if got == int64(n) {
			return sink, got
		}
		if got != last {
			last, still = got, time.Now()
		}
		if time.Since(still) > time.Second {
			return sink, got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A burst of Events about many objects, one each (a policy's templates
// reaching every member: one WorkDispatching per Work), is written in
// full, where one client-go broadcaster drops most of it.
func TestBurstIsWrittenInFull(t *testing.T) {
	const n = 6000
	if _, one := burst(t, record.NewBroadcaster(), n, 0); one >= n {
		t.Fatalf("one client-go broadcaster wrote all %d Events of the burst: the burst is too small to test anything", n)
	} else {
		t.Logf("one client-go broadcaster wrote %d of %d Events", one, n)
	}
	sink, got := burst(t, NewBroadcaster(Shards, QueueLimit, Hooks{}), n, 0)
	if got != n {
		t.Fatalf("%d shards wrote %d of %d Events; want every one", Shards, got, n)
	}
	for obj, c := range sink.objects {
		if c != 1 {
			t.Errorf("%s: %d Events written, want 1", obj, c)
		}
	}
}

// Every Event about one object goes through one shard, so client-go's
// correlator counts its repeats: the same Event ten times is one Event
// with count 10, not one per shard.
func TestRepeatsOfOneObjectAreCounted(t *testing.T) {
	sink := &countingSink{}
	b := NewBroadcaster(Shards, QueueLimit, Hooks{})
	b.StartRecordingToSink(sink)
	defer b.Shutdown()
	r := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "binding-controller"})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web", UID: "u"}}
	for range 10 {
		r.Event(cm, corev1.EventTypeNormal, "SyncWorkSucceed", "Sync work of resourceBinding(demo/web-deployment) successful.")
	}
	deadline := time.Now().Add(30 * time.Second)
	for sink.last().Count != 10 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if c, p := sink.creates.Load(), sink.patches.Load(); c != 1 || p != 9 || sink.last().Count != 10 {
		t.Fatalf("10 repeats of one Event: %d created, %d patched, last count %d; want 1 created, 9 patched, count 10", c, p, sink.last().Count)
	}
}

type countingSink struct {
	creates, patches atomic.Int64
	mu               sync.Mutex
	latest           corev1.Event
}

func (s *countingSink) keep(e *corev1.Event) (*corev1.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest = *e.DeepCopy()
	return e, nil
}
func (s *countingSink) last() corev1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest
}
func (s *countingSink) Create(e *corev1.Event) (*corev1.Event, error) {
	s.creates.Add(1)
	return s.keep(e)
}
func (s *countingSink) Update(e *corev1.Event) (*corev1.Event, error) { return s.keep(e) }
func (s *countingSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	s.patches.Add(1)
	return s.keep(e)
}

func TestShard(t *testing.T) {
	work := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web-deployment"}}
	ref := &corev1.ObjectReference{Kind: "Work", Namespace: "karmada-es-member1", Name: "web-deployment"}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member2", Name: "web-deployment"}}
	if Shard(work, Shards) != Shard(ref, Shards) {
		t.Errorf("an object and a reference to it go through shards %d and %d; want one", Shard(work, Shards), Shard(ref, Shards))
	}
	if Shard(work, 1) != 0 || Shard(work, 0) != 0 {
		t.Errorf("with one shard (or none asked) every object goes through shard 0")
	}
	used := map[int]bool{}
	for i := range 200 {
		used[Shard(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: other.Namespace, Name: fmt.Sprint("web-", i)}}, Shards)] = true
	}
	if len(used) != Shards {
		t.Errorf("200 objects went through %d of %d shards; want all of them", len(used), Shards)
	}
}
