package holdwrites

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// blocking is a transport whose requests stay in flight until released.
type blocking struct {
	started chan *http.Request
	release chan struct{}
}

func (b *blocking) RoundTrip(req *http.Request) (*http.Response, error) {
	b.started <- req
	<-b.release
	return &http.Response{StatusCode: http.StatusOK, Request: req}, nil
}

func request(ctx context.Context, t *testing.T, method, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "https://hub.example"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestBulkWritesWaitHoldsDoNot(t *testing.T) {
	next := &blocking{started: make(chan *http.Request, 10), release: make(chan struct{})}
	rt := Limit(next, 1)
	ctx := context.Background()
	done := make(chan string, 10)
	send := func(name string, req *http.Request) {
		go func() {
			if _, err := rt.RoundTrip(req); err != nil {
				done <- name + ": " + err.Error()
				return
			}
			done <- name
		}()
	}
	works := "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works/web"
	send("bulk-1", request(ctx, t, http.MethodPatch, works))
	if got := (<-next.started).Method; got != http.MethodPatch {
		t.Fatalf("first in flight: %s", got)
	}
	// The one bulk slot is taken: the next bulk write waits; a hold write,
	// a read and a Lease renewal go at once.
	send("bulk-2", request(ctx, t, http.MethodPatch, works))
	send("hold", request(Hold(ctx), t, http.MethodPatch, works))
	send("read", request(ctx, t, http.MethodGet, works))
	send("lease", request(ctx, t, http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/federator-system/leases/federator"))
	for range 3 {
		select {
		case <-next.started:
		case <-time.After(5 * time.Second):
			t.Fatal("a hold write, a read or a Lease renewal waited behind a bulk write")
		}
	}
	select {
	case <-next.started:
		t.Fatal("a second bulk write went in flight while the slot was taken")
	case <-time.After(100 * time.Millisecond):
	}
	close(next.release)
	select {
	case <-next.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting bulk write never went once the slot was free")
	}
	for range 5 {
		<-done
	}
}

func TestWaitingBulkWriteGivesUpWithItsContext(t *testing.T) {
	next := &blocking{started: make(chan *http.Request, 10), release: make(chan struct{})}
	defer close(next.release)
	rt := Limit(next, 1)
	go func() {
		_, _ = rt.RoundTrip(request(context.Background(), t, http.MethodPost, "/api/v1/namespaces/a/events"))
	}()
	<-next.started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := rt.RoundTrip(request(ctx, t, http.MethodPost, "/api/v1/namespaces/a/events")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's deadline", err)
	}
}

// A bulk write waiting for its turn stops when its reconcile is told to
// give way, and one told before it asks does not wait; a write already in
// flight is not interrupted, and a free slot is taken even when told.
func TestWaitingBulkWriteGivesWay(t *testing.T) {
	next := &blocking{started: make(chan *http.Request, 10), release: make(chan struct{})}
	rt := Limit(next, 1)
	turn := &testTurn{giveWay: make(chan struct{})}
	ctx := WithTurn(context.Background(), turn)
	works := "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works/web"
	inFlight := make(chan error, 1)
	go func() {
		_, err := rt.RoundTrip(request(ctx, t, http.MethodPatch, works))
		inFlight <- err
	}()
	<-next.started
	waiting := make(chan error, 1)
	go func() {
		_, err := rt.RoundTrip(request(ctx, t, http.MethodPatch, works))
		waiting <- err
	}()
	select {
	case err := <-waiting:
		t.Fatalf("the second bulk write did not wait for the slot: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if n := turn.waiting.Load(); n != 1 {
		t.Errorf("the turn counts %d writes waiting for a slot, want 1 (the one in flight does not wait)", n)
	}
	close(turn.giveWay)
	select {
	case err := <-waiting:
		if !errors.Is(err, ErrGaveWay) {
			t.Fatalf("the waiting write returned %v, want ErrGaveWay", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting write did not give way")
	}
	if _, err := rt.RoundTrip(request(ctx, t, http.MethodPatch, works)); !errors.Is(err, ErrGaveWay) {
		t.Fatalf("a write that would wait, asked after the reconcile was told to give way, returned %v, want ErrGaveWay", err)
	}
	if n := turn.waiting.Load(); n != 0 {
		t.Errorf("the turn counts %d writes waiting once none waits", n)
	}
	select {
	case <-next.started:
		t.Fatal("a write that gave way was sent")
	default:
	}
	// A hold write of the same reconcile is not limited and never gives way.
	hold := make(chan error, 1)
	go func() {
		_, err := rt.RoundTrip(request(Hold(ctx), t, http.MethodPatch, works))
		hold <- err
	}()
	<-next.started
	close(next.release)
	if err := <-hold; err != nil {
		t.Fatalf("a hold write gave way: %v", err)
	}
	if err := <-inFlight; err != nil {
		t.Fatalf("the write in flight was interrupted: %v", err)
	}
	// The slot is free again: a write told to give way takes it.
	if _, err := rt.RoundTrip(request(ctx, t, http.MethodPatch, works)); err != nil {
		t.Fatalf("a write that found a free slot gave way: %v", err)
	}
}

type testTurn struct {
	giveWay chan struct{}
	waiting atomic.Int32
}

func (t *testTurn) GiveWay() <-chan struct{} { return t.giveWay }
func (t *testTurn) Waiting(delta int)        { t.waiting.Add(int32(delta)) }

func TestNoLimit(t *testing.T) {
	next := &blocking{}
	if Limit(next, 0) != http.RoundTripper(next) {
		t.Fatal("a bound of 0 should leave the transport as it is")
	}
}
