package main

import (
	"math"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The names and the broken build's error rate of the local fleet's
// stand-in application (pkg/fleetmetrics, which a test compares; it is not
// imported, to keep client-go out of the image). Its labels cluster,
// namespace and deployment are what Prometheus adds to a real pod's
// samples as target labels, so the process's own are version and code.
const (
	requestsTotal   = "federator_fleet_http_requests_total"
	requestDuration = "federator_fleet_http_request_duration_seconds"
	brokenErrorRate = 0.5
)

// instrument counts the requests serve answers, by version and code, and
// their latency, by version, in reg. Both codes are there from the start,
// at 0 as in the local fleet, so an error ratio is 0 before the first
// failure rather than absent.
func instrument(reg prometheus.Registerer, version string, serve http.Handler) http.Handler {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: requestsTotal,
		Help: "Requests to / the application served, by version and HTTP code.",
	}, []string{"version", "code"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    requestDuration,
		Help:    "Latency of the requests to / the application served, by version.",
		Buckets: prometheus.DefBuckets,
	}, []string{"version"})
	reg.MustRegister(requests, duration)
	for _, code := range []int{http.StatusOK, http.StatusInternalServerError} {
		requests.WithLabelValues(version, strconv.Itoa(code))
	}
	duration.WithLabelValues(version)
	labels := prometheus.Labels{"version": version}
	return promhttp.InstrumentHandlerDuration(duration.MustCurryWith(labels),
		promhttp.InstrumentHandlerCounter(requests.MustCurryWith(labels), serve))
}

// failures picks the requests that fail at rate, by count rather than by
// chance: once n requests have come, exactly ⌊n·rate⌋ of them failed,
// request n failing when that number steps up. At 0.5 every second request
// fails (the 2nd, 4th, ...), at 0.25 every fourth, at 1 all, at 0 none.
// Concurrent requests each take their own n.
type failures struct {
	rate float64
	n    atomic.Uint64
}

// next says whether the next request fails.
func (f *failures) next() bool {
	n := f.n.Add(1)
	return failedBy(n, f.rate) > failedBy(n-1, f.rate)
}

// failedBy is ⌊n·rate⌋, forgiving the float error of n·rate (0.7·10 is 7).
func failedBy(n uint64, rate float64) uint64 {
	return uint64(math.Floor(float64(n)*rate + 1e-9))
}
