// Package hubclock owns telling the time by the hub's clock on a machine
// whose own clock may be wrong: the hub API server stamps what it stores
// (a Freeze's creationTimestamp) with its clock, so an end computed from
// such a stamp is judged against the hub's clock, not the reader's. An
// agent at the edge whose clock runs ahead would otherwise end a `freeze
// --for` early.
//
// The hub's clock is read from the Date header of its responses (RFC
// 9110: the time the response was generated, in whole seconds): the
// clock's offset from the local one is taken from the latest response,
// so a local clock that is stepped afterwards is corrected by the next
// response, and the reading lags the hub's by less than a second plus the
// response's transit (a freeze ends that much later, never earlier).
package hubclock

import (
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// Clock is the hub's clock as its responses tell it; until the first
// response it is the local clock. It is a clock.PassiveClock.
type Clock struct {
	local clock.PassiveClock

	mu sync.Mutex
	// offset is the local clock minus the hub's, at the latest response.
	offset time.Duration
	read   bool
}

// New is a Clock over local (the wall clock when nil). Wrap the hub's
// rest.Config with Observe so that it learns the hub's time.
func New(local clock.PassiveClock) *Clock {
	if local == nil {
		local = clock.RealClock{}
	}
	return &Clock{local: local}
}

// Observe makes every request made with config tell c the hub's time.
func (c *Clock) Observe(config *rest.Config) *rest.Config {
	config = rest.CopyConfig(config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return roundTripper{c: c, next: rt} })
	return config
}

// Now is the hub's time now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.local.Now().Add(-c.offset)
}

// Since is the hub's time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Offset is how far the local clock is ahead of the hub's (negative:
// behind), and whether a response has told it yet.
func (c *Clock) Offset() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset, c.read
}

// saw records a response generated at date (the hub's clock, truncated to
// the second) that arrived at local time at.
func (c *Clock) saw(date, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset, c.read = at.Sub(date), true
}

type roundTripper struct {
	c    *Clock
	next http.RoundTripper
}

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	if err == nil && resp != nil {
		if date, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
			rt.c.saw(date, rt.c.local.Now())
		}
	}
	return resp, err
}

// WrappedRoundTripper lets client-go see through the wrapper.
func (rt roundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }
