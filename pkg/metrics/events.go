package metrics

import "github.com/prometheus/client_golang/prometheus"

// EventsQueued is how many of the controllers' Events wait to be written
// to the hub (internal/recorder's queues).
var EventsQueued = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "federator_events_queued",
	Help: "Kubernetes Events of federator's controllers waiting to be written to the hub.",
})

// EventsDropped counts Events never written to the hub, by why:
// queue-full (more waiting than a queue keeps), write-failed (the hub
// rejected it, or retries ran out) or shutdown.
var EventsDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "federator_events_dropped_total",
	Help: "Kubernetes Events of federator's controllers never written to the hub, by reason: queue-full, write-failed, shutdown.",
}, []string{"reason"})

// EventQueue is what internal/recorder reports, as these metrics.
func EventQueue() (queued func(delta int), dropped func(reason string)) {
	return func(delta int) { EventsQueued.Add(float64(delta)) },
		func(reason string) { EventsDropped.WithLabelValues(reason).Inc() }
}
