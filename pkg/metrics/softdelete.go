package metrics

import "github.com/prometheus/client_golang/prometheus"

// SoftDeletionsPending is the number of running deletion countdowns per
// member: one per tombstone pkg/softdelete's informer holds, so a restart
// counts them again from what is stored.
var SoftDeletionsPending = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "federator_soft_deletions_pending",
	Help: "Objects in a member cluster whose deletion countdown runs (federator.dev/deletion-delay).",
}, []string{"cluster"})

// SoftDeletionsCompleted counts countdowns that ended with the object gone
// from the member: its delay passed, it was forced, or it was deleted
// there directly.
var SoftDeletionsCompleted = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "federator_soft_deletions_completed_total",
	Help: "Deletion countdowns that ended with the member object deleted (delay passed, forced, or deleted in the member).",
}, []string{"cluster"})
