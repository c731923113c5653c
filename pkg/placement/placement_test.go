package placement

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
)

// fleet is the registered clusters every case places against. "retiring" is
// being deleted and matches everything, so every case also checks that a
// deleting cluster is never a target.
func fleet() []clusterv1alpha1.Cluster {
	cluster := func(name string, labels map[string]string, spec clusterv1alpha1.ClusterSpec) clusterv1alpha1.Cluster {
		return clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: spec}
	}
	retiring := cluster("retiring", map[string]string{"env": "prod"},
		clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "us-east-1", Zones: []string{"us-east-1a"}})
	retiring.DeletionTimestamp = &metav1.Time{Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	// Listed out of name order: Targets must come back sorted regardless.
	return []clusterv1alpha1.Cluster{
		cluster("member3", map[string]string{"env": "dev"},
			clusterv1alpha1.ClusterSpec{Provider: "gcp", Region: "europe-west1"}),
		retiring,
		cluster("member1", map[string]string{"env": "prod"},
			clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b"}}),
		cluster("member2", map[string]string{"env": "prod"},
			clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "eu-west-1", Zones: []string{"eu-west-1a"}}),
	}
}

func targets(nameReplicas ...any) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for i := 0; i < len(nameReplicas); i += 2 {
		out = append(out, workv1alpha2.TargetCluster{Name: nameReplicas[i].(string), Replicas: int32(nameReplicas[i+1].(int))})
	}
	return out
}

func divided(weights ...policyv1alpha1.StaticClusterWeight) *policyv1alpha1.ReplicaSchedulingStrategy {
	strategy := &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	}
	if len(weights) > 0 {
		strategy.WeightPreference = &policyv1alpha1.ClusterPreferences{StaticWeightList: weights}
	}
	return strategy
}

func weight(w int64, names ...string) policyv1alpha1.StaticClusterWeight {
	return policyv1alpha1.StaticClusterWeight{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: names}, Weight: w}
}

func labelSelector(key, value string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}
}

func fieldSelector(key string, op corev1.NodeSelectorOperator, values ...string) *policyv1alpha1.FieldSelector {
	return &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func TestPlace(t *testing.T) {
	tests := []struct {
		name      string
		placement *policyv1alpha1.Placement
		replicas  int32
		uid       types.UID
		want      Result
		wantErr   string // substring; empty: no error
	}{
		{
			name: "nil placement selects every cluster",
			want: Result{Targets: targets("member1", 0, "member2", 0, "member3", 0)},
		},
		{
			name:      "empty placement selects every cluster",
			placement: &policyv1alpha1.Placement{},
			replicas:  2,
			want:      Result{Targets: targets("member1", 2, "member2", 2, "member3", 2)},
		},
		{
			name:      "clusterNames",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3", "member1"}}},
			want:      Result{Targets: targets("member1", 0, "member3", 0)},
		},
		{
			name:      "a deleting cluster named explicitly is known but not a target",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"retiring", "member2"}}},
			want:      Result{Targets: targets("member2", 0)},
		},
		{
			name:      "exclude",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"member2"}}},
			want:      Result{Targets: targets("member1", 0, "member3", 0)},
		},
		{
			name: "exclude wins over clusterNames",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				ClusterNames: []string{"member1", "member2"}, ExcludeClusters: []string{"member2"}}},
			want: Result{Targets: targets("member1", 0)},
		},
		{
			name:      "labelSelector",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: labelSelector("env", "prod")}},
			want:      Result{Targets: targets("member1", 0, "member2", 0)},
		},
		{
			name: "labelSelector and clusterNames must both match",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				LabelSelector: labelSelector("env", "prod"), ClusterNames: []string{"member2", "member3"}}},
			want: Result{Targets: targets("member2", 0)},
		},
		{
			name: "fieldSelector on provider and region",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
				MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "provider", Operator: corev1.NodeSelectorOpIn, Values: []string{"aws"}},
					{Key: "region", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"us-east-1"}},
				}}}},
			want: Result{Targets: targets("member2", 0)},
		},
		{
			name: "fieldSelector zone In needs every zone of the cluster listed",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				FieldSelector: fieldSelector("zone", corev1.NodeSelectorOpIn, "us-east-1a", "eu-west-1a")}},
			want: Result{Targets: targets("member2", 0)},
		},
		{
			name: "fieldSelector zone NotIn matches clusters without zones",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				FieldSelector: fieldSelector("zone", corev1.NodeSelectorOpNotIn, "eu-west-1a")}},
			want: Result{Targets: targets("member1", 0, "member3", 0)},
		},
		{
			name: "unknown cluster names are reported, sorted and once",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				ClusterNames: []string{"member1", "nope", "gone", "nope"}}},
			want: Result{Targets: targets("member1", 0), Unknown: []string{"gone", "nope"}},
		},
		{
			name:      "only unknown cluster names: no targets",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"nope"}}},
			replicas:  3,
			want:      Result{Unknown: []string{"nope"}},
		},
		{
			name: "clusterAffinities: first term that selects a cluster",
			placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
				{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"nope"}}},
				{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{LabelSelector: labelSelector("env", "dev")}},
				{AffinityName: "last", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "unused"}}},
			}},
			want: Result{Targets: targets("member3", 0), Unknown: []string{"nope"}},
		},
		{
			name: "clusterAffinities: the first term wins when it selects anything",
			placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
				{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
				{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}},
			}},
			want: Result{Targets: targets("member2", 0)},
		},
		{
			name:      "duplicated: every target gets the template's replicas",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}},
			replicas:  3,
			want:      Result{Targets: targets("member1", 3, "member2", 3, "member3", 3)},
		},
		{
			name:      "divided 1:1:1 with 7 replicas: remainder to the smaller name",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(weight(1, "member1"), weight(1, "member2"), weight(1, "member3"))},
			replicas:  7,
			want:      Result{Targets: targets("member1", 3, "member2", 2, "member3", 2)},
		},
		{
			name:      "divided 1:1:1 with 7 replicas and a template UID that favours the larger name",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(weight(1, "member1"), weight(1, "member2"), weight(1, "member3"))},
			replicas:  7,
			uid:       "uid-1", // FNV-1a hash is odd
			want:      Result{Targets: targets("member1", 2, "member2", 2, "member3", 3)},
		},
		{
			name:      "divided 1:1:1 with 7 replicas and a template UID that favours the smaller name",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(weight(1, "member1"), weight(1, "member2"), weight(1, "member3"))},
			replicas:  7,
			uid:       "uid-2", // FNV-1a hash is even
			want:      Result{Targets: targets("member1", 3, "member2", 2, "member3", 2)},
		},
		{
			name: "divided 2:1 with 3 replicas",
			placement: &policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
				ReplicaScheduling: divided(weight(2, "member1"), weight(1, "member2")),
			},
			replicas: 3,
			want:     Result{Targets: targets("member1", 2, "member2", 1)},
		},
		{
			name: "divided by weights on labelSelector-matched targets; the largest matching weight counts",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(
				policyv1alpha1.StaticClusterWeight{TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: labelSelector("env", "prod")}, Weight: 1},
				weight(2, "member3"),
				weight(1, "member3"),
			)},
			replicas: 8,
			want:     Result{Targets: targets("member1", 2, "member2", 2, "member3", 4)},
		},
		{
			name: "divided: a cluster no weight rule matches gets no replicas and is no target",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(
				policyv1alpha1.StaticClusterWeight{TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: labelSelector("env", "prod")}, Weight: 1},
			)},
			replicas: 5,
			want:     Result{Targets: targets("member1", 3, "member2", 2)},
		},
		{
			name:      "divided: weights matching no candidate fall back to equal weights",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "member3"}}, ReplicaScheduling: divided(weight(5, "member1"))},
			replicas:  3,
			want:      Result{Targets: targets("member2", 2, "member3", 1)},
		},
		{
			name:      "divided without weights: equal weights",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided()},
			replicas:  5,
			want:      Result{Targets: targets("member1", 2, "member2", 2, "member3", 1)},
		},
		{
			name:      "divided without a preference defaults to Weighted",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}},
			replicas:  4,
			want:      Result{Targets: targets("member1", 2, "member2", 1, "member3", 1)},
		},
		{
			name:      "divided: fewer replicas than clusters drops clusters left with none",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided()},
			replicas:  2,
			want:      Result{Targets: targets("member1", 1, "member2", 1)},
		},
		{
			name:      "divided: a kind without replicas goes to every candidate",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(weight(1, "member1"))},
			replicas:  0,
			want:      Result{Targets: targets("member1", 0, "member2", 0, "member3", 0)},
		},
		{
			name:      "divided: spread constraints are ignored under static weights, as in Karmada",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(weight(1, "member1")), SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 1}}},
			replicas:  2,
			want:      Result{Targets: targets("member1", 2)},
		},
		{
			name: "invalid labelSelector",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near", Values: []string{"prod"}}}}}},
			wantErr: "spec.placement.clusterAffinity.labelSelector: ",
		},
		{
			name: "invalid labelSelector in a clusterAffinities term",
			placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
				{AffinityName: "a"},
				{AffinityName: "b", ClusterAffinity: policyv1alpha1.ClusterAffinity{LabelSelector: labelSelector("env", "not a valid value")}},
			}},
			wantErr: "spec.placement.clusterAffinities[1].labelSelector: ",
		},
		{
			name: "invalid labelSelector in a static weight",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(weight(1, "member1"),
				policyv1alpha1.StaticClusterWeight{TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: labelSelector("bad key!", "x")}, Weight: 1})},
			replicas: 2,
			wantErr:  "spec.placement.replicaScheduling.weightPreference.staticWeightList[1].targetCluster.labelSelector: ",
		},
		{
			name: "fieldSelector key Karmada does not admit",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				FieldSelector: fieldSelector("cloud", corev1.NodeSelectorOpIn, "aws")}},
			wantErr: "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key: unsupported key",
		},
		{
			name: "fieldSelector operator Karmada does not admit",
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				FieldSelector: fieldSelector("region", corev1.NodeSelectorOpExists)}},
			wantErr: "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].operator: unsupported operator",
		},
		{
			name: "clusterAffinity and clusterAffinities together",
			placement: &policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{},
				ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{AffinityName: "a"}},
			},
			wantErr: "spec.placement: clusterAffinities cannot co-exist with clusterAffinity",
		},
		{
			name: "aggregated division is refused, not approximated",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}},
			replicas: 3,
			wantErr:  "spec.placement.replicaScheduling.replicaDivisionPreference: Aggregated is not supported",
		},
		{
			name: "dynamic weights are refused",
			placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
				WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}},
			replicas: 3,
			wantErr:  "spec.placement.replicaScheduling.weightPreference.dynamicWeight: ",
		},
		{
			name:      "spread constraints Karmada would enforce are refused",
			placement: &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 1}}},
			wantErr:   "spec.placement.spreadConstraints: ",
		},
		{
			name:     "negative replicas",
			replicas: -1,
			wantErr:  "replicas: must not be negative",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PlaceForTemplate(tt.placement, fleet(), tt.replicas, tt.uid)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := decided(got); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if tt.uid == "" {
				viaPlace, err := Place(tt.placement, fleet(), tt.replicas)
				if err != nil || !reflect.DeepEqual(viaPlace, got) {
					t.Errorf("Place = %+v, %v; want PlaceForTemplate's result with an empty UID", viaPlace, err)
				}
			}
		})
	}
}

// TestPlaceDoesNotModifyInputs guards the defaulting: Karmada's scheduler
// writes a default weight preference into the placement it is given; Place
// must not, since callers pass objects from informer caches.
func TestPlaceDoesNotModifyInputs(t *testing.T) {
	placement := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	before := placement.DeepCopy()
	clusters := fleet()
	clustersBefore := fleet()
	if _, err := Place(placement, clusters, 5); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(placement, before) {
		t.Errorf("placement modified: %+v", placement)
	}
	if !reflect.DeepEqual(clusters, clustersBefore) {
		t.Errorf("clusters modified")
	}
	// PlaceBinding's callers hand it the cache's own Clusters.
	spec := &workv1alpha2.ResourceBindingSpec{Placement: placement, Replicas: 5, Clusters: targets("member4", 0),
		Resource: workv1alpha2.ObjectReference{APIVersion: "example.com/v1", Kind: "Widget"}}
	specBefore := spec.DeepCopy()
	withAPIs, withAPIsBefore := apiFleet(), apiFleet()
	if _, err := PlaceBinding(spec, withAPIs, "uid"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(spec, specBefore) || !reflect.DeepEqual(withAPIs, withAPIsBefore) {
		t.Errorf("PlaceBinding modified its inputs")
	}
}
