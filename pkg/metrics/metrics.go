// Package metrics owns federator's Prometheus metrics, all prefixed
// federator_ and served on the controller manager's metrics endpoint. Gauges
// are computed from the informer cache when scraped, so they are always what
// the hub stores, never a count kept in memory that a restart would lose.
package metrics

import (
	"context"
	"sort"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ManifestWrites counts what dispatching one manifest to a member did:
// result is created, updated, unchanged (nothing written) or error.
var ManifestWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "federator_member_manifest_applies_total",
	Help: "Manifests dispatched to member clusters, by cluster and result (created, updated, unchanged: not written, error).",
}, []string{"cluster", "result"})

var (
	worksDesc = prometheus.NewDesc("federator_works",
		"Works per member cluster by the reason of their Dispatching condition (Dispatching, SuspendDispatching, ...; Unknown before the first dispatch).",
		[]string{"cluster", "dispatching"}, nil)
	clusterReadyDesc = prometheus.NewDesc("federator_cluster_ready",
		"1 when the member Cluster's Ready condition is True, else 0.",
		[]string{"cluster"}, nil)
)

// WorkKey is one federator_works series.
type WorkKey struct{ Cluster, Dispatching string }

// CountWorks groups Works by member cluster and Dispatching reason.
func CountWorks(works []workv1alpha1.Work) map[WorkKey]int {
	out := map[WorkKey]int{}
	for i := range works {
		cluster, err := names.GetClusterName(works[i].Namespace)
		if err != nil {
			continue
		}
		reason := "Unknown"
		if c := meta.FindStatusCondition(works[i].Status.Conditions, workv1alpha1.WorkDispatching); c != nil {
			reason = c.Reason
		}
		out[WorkKey{cluster, reason}]++
	}
	return out
}

// collector computes the gauges from the cache at scrape time.
type collector struct{ reader client.Reader }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- worksDesc
	ch <- clusterReadyDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ctx := context.Background()
	works := &workv1alpha1.WorkList{}
	if err := c.reader.List(ctx, works); err == nil {
		counts := CountWorks(works.Items)
		keys := make([]WorkKey, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].Cluster+keys[i].Dispatching < keys[j].Cluster+keys[j].Dispatching })
		for _, k := range keys {
			ch <- prometheus.MustNewConstMetric(worksDesc, prometheus.GaugeValue, float64(counts[k]), k.Cluster, k.Dispatching)
		}
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := c.reader.List(ctx, clusters); err == nil {
		for _, cl := range clusters.Items {
			ready := 0.0
			if meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				ready = 1
			}
			ch <- prometheus.MustNewConstMetric(clusterReadyDesc, prometheus.GaugeValue, ready, cl.Name)
		}
	}
}

// Register adds federator's metrics to controller-runtime's registry, with
// gauges read through reader (the manager's cache). Call once per process.
func Register(reader client.Reader) error {
	for _, c := range []prometheus.Collector{ManifestWrites, collector{reader}} {
		if err := crmetrics.Registry.Register(c); err != nil {
			if _, already := err.(prometheus.AlreadyRegisteredError); !already {
				return err
			}
		}
	}
	return nil
}
