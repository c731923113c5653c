package placement

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
)

// benchRegions are the regions a benchmark fleet spreads over; each has three
// zones. Clusters are assigned round-robin, so every size has every region.
var benchRegions = []struct{ region, provider string }{
	{"us-east-1", "aws"},
	{"us-west-2", "aws"},
	{"eu-west-1", "aws"},
	{"europe-west4", "gcp"},
	{"asia-east1", "gcp"},
}

// benchFleet returns n registered clusters as the hub's informer holds them:
// region/zone/env/provider labels (the topology.kubernetes.io keys and a
// team's own), the matching spec fields, and a Ready status.
func benchFleet(n int) []clusterv1alpha1.Cluster {
	clusters := make([]clusterv1alpha1.Cluster, n)
	for i := range clusters {
		r := benchRegions[i%len(benchRegions)]
		zone := fmt.Sprintf("%s%c", r.region, 'a'+rune(i/len(benchRegions)%3))
		env := "prod"
		if i%4 == 3 {
			env = "staging"
		}
		clusters[i] = clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("member-%04d", i),
				Labels: map[string]string{
					"topology.kubernetes.io/region": r.region,
					"topology.kubernetes.io/zone":   zone,
					"cloud.provider":                r.provider,
					"env":                           env,
					"tier":                          []string{"edge", "core"}[i%2],
				},
			},
			Spec: clusterv1alpha1.ClusterSpec{
				SyncMode: clusterv1alpha1.Push,
				Provider: r.provider,
				Region:   r.region,
				Zones:    []string{zone},
			},
			Status: clusterv1alpha1.ClusterStatus{
				KubernetesVersion: "v1.34.1",
				Conditions: []metav1.Condition{{
					Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
					Reason: "ClusterReady", Message: "cluster is healthy and ready to accept workloads",
				}},
			},
		}
	}
	return clusters
}

// benchAffinity selects the production clusters of three of the five
// regions (about 45% of the fleet): a matchLabels term and a
// matchExpressions term, as a real policy writes it.
func benchAffinity() *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{
		LabelSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"env": "prod"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key:      "topology.kubernetes.io/region",
				Operator: metav1.LabelSelectorOpIn,
				Values:   []string{"us-east-1", "eu-west-1", "europe-west4"},
			}},
		},
		ExcludeClusters: []string{"member-0003"},
	}
}

// BenchmarkPlace measures one placement decision (the binding controller makes
// one per reconcile) for fleets of 10, 100 and 1000 clusters.
//   - duplicated: labelSelector affinity, every selected cluster gets all replicas.
//   - divided: the same affinity, replicas split by a staticWeightList whose
//     rules select by region label and by cluster name, with the template UID
//     as tie breaker; replicas are 3 per cluster in the fleet.
func BenchmarkPlace(b *testing.B) {
	duplicated := &policyv1alpha1.Placement{
		ClusterAffinity: benchAffinity(),
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated,
		},
	}
	divided := &policyv1alpha1.Placement{
		ClusterAffinity: benchAffinity(),
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				{TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"topology.kubernetes.io/region": "us-east-1"}}}, Weight: 3},
				{TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"topology.kubernetes.io/region": "eu-west-1"}}}, Weight: 2},
				{TargetCluster: policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
					MatchExpressions: []corev1.NodeSelectorRequirement{{
						Key: "provider", Operator: corev1.NodeSelectorOpIn, Values: []string{"gcp"}}}}}, Weight: 1},
				{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member-0000", "member-0002"}}, Weight: 5},
			}},
		},
	}
	uid := types.UID("6f1c2b7e-4d0a-4a57-9a53-2f0e8c1d9b44")

	for _, mode := range []struct {
		name      string
		placement *policyv1alpha1.Placement
	}{{"duplicated", duplicated}, {"divided", divided}} {
		for _, n := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/clusters=%d", mode.name, n), func(b *testing.B) {
				clusters := benchFleet(n)
				replicas := int32(3 * n)
				// Not timed: check the input selects what it is meant to.
				result, err := PlaceForTemplate(mode.placement, clusters, replicas, uid)
				if err != nil {
					b.Fatal(err)
				}
				if len(result.Targets) == 0 {
					b.Fatal("placement selects no cluster")
				}
				for b.Loop() {
					_, _ = PlaceForTemplate(mode.placement, clusters, replicas, uid)
				}
				// After the loop: b.Loop resets the timer, which drops metrics reported before it.
				b.ReportMetric(float64(len(result.Targets)), "targets")
			})
		}
	}
}
