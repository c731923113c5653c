// Package metrics owns federator's Prometheus metrics, all prefixed
// federator_ and served on the controller manager's metrics endpoint.
// Works per member and Dispatching reason are counted from the Work
// informer's events, so a scrape reads a few counters instead of copying
// every Work; the informer replays every stored Work when it starts, so the
// counts are always what the hub stores and a restart loses nothing. Member
// readiness is read from the cache at scrape time (one object per member).
package metrics

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// ManifestWrites counts what dispatching one manifest to a member did:
// result is created, updated, unchanged (nothing written) or error.
var ManifestWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "federator_member_manifest_applies_total",
	Help: "Manifests dispatched to member clusters, by cluster and result (created, updated, unchanged: not written, error).",
}, []string{"cluster", "result"})

// holdQueueWait is how long each change of what holds a cluster waited in
// a controller's queue before a worker took it.
var holdQueueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name: "federator_hold_queue_wait_seconds",
	Help: "Time from a change of what holds a cluster being queued to a worker taking it, by controller and by what it waited behind: " +
		"worker (every worker busy) or same-object (a reconcile of the same object in flight).",
	Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
}, []string{"controller", "behind"})

// ObserveHoldQueueWait records one hold change's wait (internal/holdqueue's
// Watched.Observe).
func ObserveHoldQueueWait(controller string, wait time.Duration, sameObject bool) {
	behind := "worker"
	if sameObject {
		behind = "same-object"
	}
	holdQueueWait.WithLabelValues(controller, behind).Observe(wait.Seconds())
}

var (
	worksDesc = prometheus.NewDesc("federator_works",
		"Works per member cluster by the reason of their Dispatching condition (Dispatching, SuspendDispatching, ...; Unknown before the first dispatch).",
		[]string{"cluster", "dispatching"}, nil)
	gateOpenDesc = prometheus.NewDesc("federator_gate_open",
		"1 while the Gate's Opened condition is True, else 0.",
		[]string{"namespace", "name"}, nil)
	gateHeldDesc = prometheus.NewDesc("federator_gate_held_works",
		"Works held because this Gate is closed (their Dispatching reason is GateClosed and their hold names the gate).",
		[]string{"namespace", "name"}, nil)
	clusterReadyDesc = prometheus.NewDesc("federator_cluster_ready",
		"1 when the member Cluster's Ready condition is True, else 0.",
		[]string{"cluster"}, nil)
)

// WorkKey is one federator_works series.
type WorkKey struct{ Cluster, Dispatching string }

// workKey is the series a Work counts in; false for anything that is not a
// Work in an execution namespace.
func workKey(obj any) (WorkKey, bool) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	work, ok := obj.(*workv1alpha1.Work)
	if !ok {
		return WorkKey{}, false
	}
	cluster, err := names.GetClusterName(work.Namespace)
	if err != nil {
		return WorkKey{}, false
	}
	reason := "Unknown"
	if c := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkDispatching); c != nil {
		reason = c.Reason
	}
	return WorkKey{cluster, reason}, true
}

// GateKey is one federator_gate_held_works series: a gate as namespace and
// name.
type GateKey struct{ Namespace, Name string }

// gateKeys are the gates holding a Work: those its hold-gates annotation
// lists while its hold reason is GateClosed.
func gateKeys(obj any) []GateKey {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	work, ok := obj.(*workv1alpha1.Work)
	if !ok || work.Annotations[workkeys.HoldReasonAnnotation] != workkeys.ReasonGateClosed {
		return nil
	}
	var keys []GateKey
	for _, ref := range strings.Split(work.Annotations[workkeys.HoldGatesAnnotation], ",") {
		ns, name, ok := strings.Cut(strings.TrimSpace(ref), "/")
		if k := (GateKey{ns, name}); ok && ns != "" && name != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// workCounts is an informer event handler keeping the number of Works per
// series: per cluster and Dispatching reason, and per gate holding them.
// The informer hands each handler every change in order, with the object as
// it was before, so a Work is always counted where it is now.
type workCounts struct {
	mu     sync.Mutex
	counts map[WorkKey]int
	gates  map[GateKey]int
}

func newWorkCounts() *workCounts {
	return &workCounts{counts: map[WorkKey]int{}, gates: map[GateKey]int{}}
}

func (c *workCounts) OnAdd(obj any, _ bool)       { c.move(nil, obj) }
func (c *workCounts) OnUpdate(oldObj, newObj any) { c.move(oldObj, newObj) }
func (c *workCounts) OnDelete(obj any)            { c.move(obj, nil) }

// move takes a Work out of the series of from and into those of to.
func (c *workCounts) move(from, to any) {
	var fromWorks, toWorks []WorkKey
	if k, ok := workKey(from); ok {
		fromWorks = []WorkKey{k}
	}
	if k, ok := workKey(to); ok {
		toWorks = []WorkKey{k}
	}
	fromGates, toGates := gateKeys(from), gateKeys(to)
	if slices.Equal(fromWorks, toWorks) && slices.Equal(fromGates, toGates) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	shift(c.counts, fromWorks, toWorks)
	shift(c.gates, fromGates, toGates)
}

// shift moves one count from each of from to each of to. A series with no
// Works left is dropped, as a scrape of the stored Works would not show it.
func shift[K comparable](counts map[K]int, from, to []K) {
	for _, k := range from {
		if counts[k]--; counts[k] <= 0 {
			delete(counts, k)
		}
	}
	for _, k := range to {
		counts[k]++
	}
}

// snapshot is every series with its count, in a stable order.
func (c *workCounts) snapshot() ([]WorkKey, map[WorkKey]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := maps.Clone(c.counts)
	keys := slices.Collect(maps.Keys(counts))
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Cluster != keys[j].Cluster {
			return keys[i].Cluster < keys[j].Cluster
		}
		return keys[i].Dispatching < keys[j].Dispatching
	})
	return keys, counts
}

// gateSnapshot is the number of Works each gate holds.
func (c *workCounts) gateSnapshot() map[GateKey]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.gates)
}

// collector serves the gauges: Works from the counts, Clusters from reader.
type collector struct {
	reader client.Reader
	works  *workCounts
	// synced reports whether the counts cover every stored Work; until
	// then a scrape shows no federator_works rather than partial counts.
	synced func() bool
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- worksDesc
	ch <- clusterReadyDesc
	ch <- gateOpenDesc
	ch <- gateHeldDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	if c.synced() {
		keys, counts := c.works.snapshot()
		for _, k := range keys {
			ch <- prometheus.MustNewConstMetric(worksDesc, prometheus.GaugeValue, float64(counts[k]), k.Cluster, k.Dispatching)
		}
	}
	gates := &gatingv1alpha1.GateList{}
	if err := c.reader.List(context.Background(), gates); err == nil {
		var held map[GateKey]int
		if c.synced() {
			held = c.works.gateSnapshot()
		}
		for _, g := range gates.Items {
			open := 0.0
			if meta.IsStatusConditionTrue(g.Status.Conditions, gatingv1alpha1.ConditionOpened) {
				open = 1
			}
			ch <- prometheus.MustNewConstMetric(gateOpenDesc, prometheus.GaugeValue, open, g.Namespace, g.Name)
			if held != nil {
				ch <- prometheus.MustNewConstMetric(gateHeldDesc, prometheus.GaugeValue,
					float64(held[GateKey{g.Namespace, g.Name}]), g.Namespace, g.Name)
			}
		}
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := c.reader.List(context.Background(), clusters); err == nil {
		for _, cl := range clusters.Items {
			ready := 0.0
			if meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				ready = 1
			}
			ch <- prometheus.MustNewConstMetric(clusterReadyDesc, prometheus.GaugeValue, ready, cl.Name)
		}
	}
}

// Register adds federator's metrics to controller-runtime's registry: Work
// counts follow hub's Work informer, Clusters are read from hub (the
// manager's cache). Call once per process, before the cache starts.
func Register(hub cache.Cache) error {
	informer, err := hub.GetInformer(context.Background(), &workv1alpha1.Work{}, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("metrics: the Work informer federator_works is counted from: %w", err)
	}
	works := newWorkCounts()
	registration, err := informer.AddEventHandler(works)
	if err != nil {
		return fmt.Errorf("metrics: counting Works for federator_works: %w", err)
	}
	for _, c := range []prometheus.Collector{ManifestWrites, DispatchLatency, holdQueueWait, SoftDeletionsPending, SoftDeletionsCompleted,
		collector{reader: hub, works: works, synced: registration.HasSynced},
		suspendedCollector{reader: hub, templates: SuspendedTemplates}, RolloutFailures, rolloutCollector{reader: hub},
		EventsQueued, EventsDropped} {
		if err := crmetrics.Registry.Register(c); err != nil {
			if _, already := err.(prometheus.AlreadyRegisteredError); !already {
				return err
			}
		}
	}
	return nil
}
