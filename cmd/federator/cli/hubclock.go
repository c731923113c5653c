package cli

import (
	"net/http"
	"sync"
	"time"
)

// hubClock is the hub's clock as its answers tell it: the Date header of
// the latest response, to the second. Gate requests are stamped with it,
// not with the clock of the machine the CLI runs on, which may be minutes
// off: a close stamped ahead would act only then, one stamped behind an
// open could lose to it.
type hubClock struct {
	mu     sync.Mutex
	latest time.Time
}

// wrap records the Date of every answer that passes through rt; it is a
// rest.Config WrapTransport.
func (c *hubClock) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			if at, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
				c.mu.Lock()
				c.latest = at
				c.mu.Unlock()
			}
		}
		return resp, err
	})
}

// now is the Date of the latest answer, false before any answer with one.
func (c *hubClock) now() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.latest, !c.latest.IsZero()
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
