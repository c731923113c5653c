package lanes

import (
	"context"
	"errors"
	"net/http"
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

func TestNoLimit(t *testing.T) {
	next := &blocking{}
	if Limit(next, 0) != http.RoundTripper(next) {
		t.Fatal("a bound of 0 should leave the transport as it is")
	}
}
