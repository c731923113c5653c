package fleetmetrics

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names, as the application's own request metrics would be named.
const (
	RequestsTotal   = "federator_fleet_http_requests_total"
	RequestDuration = "federator_fleet_http_request_duration_seconds"
)

// RequestsPerReplica is the steady load each replica a Deployment asks for
// serves, so rate() over any window gives the same numbers.
const RequestsPerReplica = 10.0

// Codes of the requests: served, and failed.
const (
	CodeOK    = "200"
	CodeError = "500"
)

var (
	requestsDesc = prometheus.NewDesc(RequestsTotal,
		"Requests the Deployment's stand-in application served, by version (its first container's image) and HTTP code.",
		[]string{"cluster", "namespace", "deployment", "version", "code"}, nil)
	durationDesc = prometheus.NewDesc(RequestDuration,
		"Latency of the requests the Deployment's stand-in application served, by version.",
		[]string{"cluster", "namespace", "deployment", "version"}, nil)
	// durationBuckets are client_golang's defaults, as an application
	// instrumented with promhttp would have them.
	durationBuckets = prometheus.DefBuckets
)

// Deployment is what the traffic of one Deployment depends on.
type Deployment struct {
	Namespace, Name string
	// Image is the version: the first container's image.
	Image string
	// Replicas is spec.replicas: traffic goes to every replica asked for,
	// ready or not, so a -broken version that never becomes ready still
	// shows its errors, and members with no workload controllers serve too.
	Replicas int32
}

type seriesKey struct{ namespace, deployment, version string }

// series are the running totals of one version of one Deployment, kept as
// fractions so that a steady load adds up exactly; they are exported
// rounded down, as counts.
type series struct {
	ok, failed float64
	buckets    []float64 // requests at or under each durationBuckets bound
	seconds    float64   // the histogram's sum
}

// traffic is one member's stand-in application: what it served so far.
type traffic struct {
	cluster string
	last    time.Time
	series  map[seriesKey]*series
}

// advance adds the requests served from the last advance until now by the
// Deployments as they are now, each version behaving as steering says. A
// version no longer deployed is dropped (its pods are gone); served again
// later, its counters start anew, as a new pod's do.
func (t *traffic) advance(now time.Time, deployments []Deployment, steering Steering) {
	elapsed := 0.0
	if !t.last.IsZero() && now.After(t.last) {
		elapsed = now.Sub(t.last).Seconds()
	}
	t.last = now
	seen := map[seriesKey]bool{}
	for _, d := range deployments {
		key := seriesKey{d.Namespace, d.Name, d.Image}
		seen[key] = true
		s := t.series[key]
		if s == nil {
			s = &series{buckets: make([]float64, len(durationBuckets))}
			t.series[key] = s
		}
		b := steering.For(d.Image)
		requests := RequestsPerReplica * float64(max(d.Replicas, 0)) * elapsed
		s.failed += requests * b.ErrorRate
		s.ok += requests * (1 - b.ErrorRate)
		s.seconds += requests * b.Latency.Seconds()
		for i, bound := range durationBuckets {
			s.buckets[i] += requests * underBound(b.Latency, bound)
		}
	}
	for key := range t.series {
		if !seen[key] {
			delete(t.series, key)
		}
	}
}

// underBound is the share of requests of typical latency l that take at
// most bound seconds: latencies spread evenly from l/2 to 3l/2, so that
// histogram_quantile finds the median at l.
func underBound(l time.Duration, bound float64) float64 {
	low, high := l.Seconds()/2, 1.5*l.Seconds()
	return math.Min(1, math.Max(0, (bound-low)/(high-low)))
}

// collect sends the member's metrics.
func (t *traffic) collect(ch chan<- prometheus.Metric) {
	for key, s := range t.series {
		labels := []string{t.cluster, key.namespace, key.deployment, key.version}
		ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, whole(s.ok), append(labels, CodeOK)...)
		ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, whole(s.failed), append(labels, CodeError)...)
		buckets := make(map[float64]uint64, len(durationBuckets))
		for i, bound := range durationBuckets {
			buckets[bound] = uint64(whole(s.buckets[i]))
		}
		ch <- prometheus.MustNewConstHistogram(durationDesc, uint64(whole(s.ok+s.failed)), s.seconds, buckets, labels...)
	}
}

// whole rounds a running total down to the requests completed, forgiving
// the float error of adding fractions (99.99999 of 100 is 100).
func whole(x float64) float64 { return math.Floor(x + 1e-6) }
