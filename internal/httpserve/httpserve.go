// Package httpserve owns how federator's own HTTP servers (the dashboard,
// the gate webhook receiver) run: served on a listener until a context
// ends, then shut down within a grace period, with request contexts that
// end with it.
package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Serve serves h on l until ctx ends, then shuts the server down, waiting
// up to grace for requests in flight. Request contexts derive from ctx, so
// long-running responses (event streams) end with it. A shutdown that
// outlasts grace is not an error: the remaining connections are dropped.
func Serve(ctx context.Context, l net.Listener, h http.Handler, grace time.Duration) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}
