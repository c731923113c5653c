package hubclock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/federator-dev/federator/internal/fleettest"
	"github.com/federator-dev/federator/pkg/fleet"
)

// A hub whose clock is 10 minutes behind the local one (an edge machine
// ahead of its hub): the clock reads the hub's time from its responses,
// never later than the hub's, and follows the hub when the local clock is
// stepped.
func TestTheClockIsTheHubsAsItsResponsesTellIt(t *testing.T) {
	local := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	hubAhead := -10 * time.Minute
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// The hub's time, to the millisecond; the header says the second.
		w.Header().Set("Date", local.Now().Add(hubAhead).Add(700*time.Millisecond).UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"34","gitVersion":"v1.34.0"}`))
	}))
	defer srv.Close()
	c := New(local)
	if _, read := c.Offset(); read || !c.Now().Equal(local.Now()) {
		t.Fatalf("before any response: %v, want the local clock %v", c.Now(), local.Now())
	}
	ask := func() {
		t.Helper()
		cs, err := kubernetes.NewForConfig(c.Observe(&rest.Config{Host: srv.URL}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.Discovery().ServerVersion(); err != nil {
			t.Fatal(err)
		}
	}
	ask()
	hub := local.Now().Add(hubAhead).Add(700 * time.Millisecond)
	if got := c.Now(); got.After(hub) || hub.Sub(got) >= time.Second {
		t.Errorf("after a response: %v, want the hub's %v or up to a second before, never after", got, hub)
	}
	if got := c.Since(hub.Add(-time.Minute)); got > time.Minute || got <= time.Minute-time.Second {
		t.Errorf("Since a minute ago by the hub's clock: %v", got)
	}

	// The local clock is stepped an hour ahead: until the hub answers
	// again the reading moves with it; the next response corrects it.
	local.Step(time.Hour)
	ask()
	hub = local.Now().Add(hubAhead).Add(700 * time.Millisecond)
	if got := c.Now(); got.After(hub) || hub.Sub(got) >= time.Second {
		t.Errorf("after the local clock was stepped: %v, want the hub's %v", got, hub)
	}
}

// A real API server says its time in every response.
func TestAnAPIServerTellsItsTime(t *testing.T) {
	f := fleettest.Start(t, fleet.Options{})
	ahead := aheadClock{by: 10 * time.Minute}
	c := New(ahead)
	cs, err := kubernetes.NewForConfig(c.Observe(f.Hub.Config))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	offset, read := c.Offset()
	if !read || offset < 10*time.Minute || offset > 10*time.Minute+2*time.Second {
		t.Errorf("offset %v (read %v), want the local clock's 10m ahead of the API server's", offset, read)
	}
	if now := c.Now(); now.After(time.Now()) || time.Since(now) > 2*time.Second {
		t.Errorf("Now %v, want the API server's (this machine's) time %v", now, time.Now())
	}
}

// aheadClock is this machine's clock, by ahead.
type aheadClock struct{ by time.Duration }

func (a aheadClock) Now() time.Time                  { return time.Now().Add(a.by) }
func (a aheadClock) Since(t time.Time) time.Duration { return a.Now().Sub(t) }
