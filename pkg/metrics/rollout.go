package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// RolloutFailures counts clusters that failed a rollout (not healthy by the
// progress deadline), by Rollout.
var RolloutFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "federator_rollout_failures_total",
	Help: "Clusters that failed a revision of a Rollout (not healthy within its progress deadline).",
}, []string{"kind", "namespace", "name"})

var (
	rolloutStageDesc = prometheus.NewDesc("federator_rollout_stage",
		"The Rollout's current stage as its position in spec.stages (1 for the first; the implicit last stage 'remaining' follows them); 0 when no stage is current (completed, or nothing taken in yet).",
		[]string{"kind", "namespace", "name", "stage"}, nil)
	rolloutClustersDesc = prometheus.NewDesc("federator_rollout_clusters",
		"Clusters of a Rollout by state (Pending, Progressing, Healthy, Failed, RolledBack, Held).",
		[]string{"kind", "namespace", "name", "state"}, nil)
)

var rolloutStates = []string{rolloutsv1alpha1.StatePending, rolloutsv1alpha1.StateProgressing, rolloutsv1alpha1.StateHealthy,
	rolloutsv1alpha1.StateFailed, rolloutsv1alpha1.StateRolledBack, rolloutsv1alpha1.StateHeld}

// rolloutCollector reads Rollouts and ClusterRollouts from the hub cache at
// scrape time: one object per rollout.
type rolloutCollector struct{ reader client.Reader }

func (rolloutCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- rolloutStageDesc
	ch <- rolloutClustersDesc
}

func (c rolloutCollector) Collect(ch chan<- prometheus.Metric) {
	ctx := context.Background()
	rollouts := &rolloutsv1alpha1.RolloutList{}
	if err := c.reader.List(ctx, rollouts); err == nil {
		for i := range rollouts.Items {
			r := &rollouts.Items[i]
			collectRollout(ch, "Rollout", r.Namespace, r.Name, &r.Spec, &r.Status)
		}
	}
	cluster := &rolloutsv1alpha1.ClusterRolloutList{}
	if err := c.reader.List(ctx, cluster); err == nil {
		for i := range cluster.Items {
			r := &cluster.Items[i]
			collectRollout(ch, "ClusterRollout", "", r.Name, &r.Spec, &r.Status)
		}
	}
}

func collectRollout(ch chan<- prometheus.Metric, kind, namespace, name string, spec *rolloutsv1alpha1.RolloutSpec, status *rolloutsv1alpha1.RolloutStatus) {
	ch <- prometheus.MustNewConstMetric(rolloutStageDesc, prometheus.GaugeValue, float64(StagePosition(spec, status.CurrentStage)),
		kind, namespace, name, status.CurrentStage)
	counts := map[string]int{}
	for _, cl := range status.Clusters {
		counts[cl.State]++
	}
	for _, state := range rolloutStates {
		ch <- prometheus.MustNewConstMetric(rolloutClustersDesc, prometheus.GaugeValue, float64(counts[state]), kind, namespace, name, state)
	}
}

// StagePosition is stage's position in spec.stages counting from 1, the
// implicit last stage after them, 0 for none.
func StagePosition(spec *rolloutsv1alpha1.RolloutSpec, stage string) int {
	if stage == "" {
		return 0
	}
	for i, s := range spec.Stages {
		if s.Name == stage {
			return i + 1
		}
	}
	return len(spec.Stages) + 1
}
