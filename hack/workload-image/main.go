// Command web is the workload image of kind fleets (federator/web:TAG,
// built by hack/workload-image/build.sh): a static HTTP server, FROM
// scratch, that real pods on kind members run. The same binary is two
// images: federator/web:1.25 serves and is ready; federator/web:1.27-broken
// serves but its readiness endpoint always fails (WEB_BROKEN=true in that
// image, or -broken), so a rollout to it stalls as a bad release would, and
// it fails half its requests to / (WEB_ERROR_RATE, or -error-rate, sets
// that share for any build), so its error rate is measurable too.
//
//	GET /         "federator web VERSION on HOSTNAME", or 500 for the
//	              requests the error rate fails (see failures)
//	GET /healthz  200 while the process runs (liveness)
//	GET /readyz   200, or 503 when broken (readiness)
//	GET /metrics  the requests / served, in Prometheus' text format:
//	              federator_fleet_http_requests_total{version,code} and
//	              federator_fleet_http_request_duration_seconds{version}
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func main() {
	o, err := parseOptions(os.Args[1:], os.Getenv, os.Stderr)
	var reported flagError
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, &reported): // flag said it, with the usage
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(2)
	}
	host, _ := os.Hostname()

	srv := &http.Server{Addr: o.addr, Handler: handler(o.version, host, o.broken, o.errorRate), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("web %s listening on %s (broken=%t, error rate %g)", o.version, o.addr, o.broken, o.errorRate)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// options are what the flags and the environment ask of the server.
type options struct {
	addr, version string
	broken        bool
	// errorRate is the share of requests to / that fail, 0 to 1.
	errorRate float64
}

// parseOptions reads args, each flag's default coming from getenv: a
// flag wins over its variable. Without either, the error rate is
// brokenErrorRate for a broken build and 0 otherwise. A WEB_ERROR_RATE or
// -error-rate that is no number from 0 to 1 is refused, named; flag's
// own messages (usage, -h) go to output.
func parseOptions(args []string, getenv func(string) string, output io.Writer) (options, error) {
	var o options
	o.broken, _ = strconv.ParseBool(getenv("WEB_BROKEN"))
	rateSet := false
	if v := getenv("WEB_ERROR_RATE"); v != "" {
		rate, err := parseErrorRate(v)
		if err != nil {
			return o, fmt.Errorf("WEB_ERROR_RATE=%s: %w", v, err)
		}
		o.errorRate, rateSet = rate, true
	}
	fs := flag.NewFlagSet("web", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&o.addr, "listen", ":8080", "address to serve on")
	fs.BoolVar(&o.broken, "broken", o.broken, "fail readiness (default from WEB_BROKEN)")
	fs.StringVar(&o.version, "version", envOr(getenv, "WEB_VERSION", "dev"), "version to report (default from WEB_VERSION)")
	fs.Func("error-rate", fmt.Sprintf("share of requests to / that fail with 500, 0 to 1 (default from WEB_ERROR_RATE, else %g when broken, 0 otherwise)", brokenErrorRate),
		func(v string) error {
			rate, err := parseErrorRate(v)
			o.errorRate, rateSet = rate, true
			return err
		})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, flagError{err}
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q: web takes flags only (-h lists them)", fs.Args())
	}
	if !rateSet && o.broken {
		o.errorRate = brokenErrorRate
	}
	return o, nil
}

// flagError is an error of flag's, which it wrote to the output already.
type flagError struct{ error }

// parseErrorRate is v as a share of requests, or an error that says what
// is accepted.
func parseErrorRate(v string) (float64, error) {
	rate, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number: give the share of requests to / that fail, from 0 to 1 (e.g. 0.2 for 20%%)", v)
	}
	if !(rate >= 0 && rate <= 1) { // NaN too
		return 0, fmt.Errorf("%s is outside 0..1: give the share of requests to / that fail, from 0 to 1 (e.g. 0.2 for 20%%)", v)
	}
	return rate, nil
}

// handler serves the endpoints of the package comment, its metrics in a
// registry of its own: only the request metrics, as the local fleet's
// stand-in serves them, and a second handler (a test's) registers anew.
func handler(version, host string, broken bool, errorRate float64) http.Handler {
	reg := prometheus.NewRegistry()
	fail := &failures{rate: errorRate}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", instrument(reg, version, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if fail.next() {
			http.Error(w, fmt.Sprintf("federator web %s on %s: failing this request (error rate %g)", version, host, errorRate), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "federator web %s on %s\n", version, host)
	})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if broken {
			http.Error(w, "not ready: this is the broken build "+version, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}
