package placement

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
)

// decided is what a placement decides, without what only its Scheduled
// message reports.
func decided(r Result) Result {
	return Result{Targets: r.Targets, Unknown: r.Unknown, LacksAPI: r.LacksAPI}
}

// served builds status.apiEnablements from "groupVersion/Kind" entries.
func served(kinds ...string) []clusterv1alpha1.APIEnablement {
	var out []clusterv1alpha1.APIEnablement
	for _, k := range kinds {
		i := strings.LastIndex(k, "/")
		out = append(out, clusterv1alpha1.APIEnablement{GroupVersion: k[:i],
			Resources: []clusterv1alpha1.APIResource{{Name: strings.ToLower(k[i+1:]) + "s", Kind: k[i+1:]}}})
	}
	return out
}

func complete(status metav1.ConditionStatus) []metav1.Condition {
	reason := map[metav1.ConditionStatus]string{metav1.ConditionTrue: "Complete", metav1.ConditionFalse: "Partial"}[status]
	return []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: status, Reason: reason}}
}

// apiFleet serves Widgets in member1 only; member3's list is partial and
// member4's not collected yet; "retiring" serves everything but is being
// deleted.
func apiFleet() []clusterv1alpha1.Cluster {
	cluster := func(name string, enablements []clusterv1alpha1.APIEnablement, conditions []metav1.Condition) clusterv1alpha1.Cluster {
		return clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: clusterv1alpha1.ClusterStatus{APIEnablements: enablements, Conditions: conditions}}
	}
	retiring := cluster("retiring", served("apps/v1/Deployment", "example.com/v1/Widget", "v1/ConfigMap"), complete(metav1.ConditionTrue))
	retiring.DeletionTimestamp = &metav1.Time{Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	return []clusterv1alpha1.Cluster{
		cluster("member4", nil, nil),
		cluster("member2", served("apps/v1/Deployment", "v1/ConfigMap"), complete(metav1.ConditionTrue)),
		retiring,
		cluster("member3", served("apps/v1/Deployment"), complete(metav1.ConditionFalse)),
		cluster("member1", served("apps/v1/Deployment", "example.com/v1/Widget", "v1/ConfigMap"), complete(metav1.ConditionTrue)),
	}
}

func lacks(nameStatus ...any) []LacksAPI {
	var out []LacksAPI
	for i := 0; i < len(nameStatus); i += 2 {
		out = append(out, LacksAPI{Cluster: nameStatus[i].(string), Status: nameStatus[i+1].(clusterv1alpha1.APIEnablementStatus)})
	}
	return out
}

func TestPlaceBindingSkipsClustersLackingTheKind(t *testing.T) {
	const (
		disabled = clusterv1alpha1.APIDisabled
		unknown  = clusterv1alpha1.APIUnknown
	)
	widget := workv1alpha2.ObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "shop", Name: "w"}
	deployment := workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	tests := []struct {
		name      string
		resource  workv1alpha2.ObjectReference
		placement *policyv1alpha1.Placement
		replicas  int32
		scheduled []workv1alpha2.TargetCluster
		clusters  []clusterv1alpha1.Cluster // apiFleet() when nil
		want      Result
		status    metav1.ConditionStatus
		reason    string
		message   string
	}{
		{
			name:     "a kind every reporting cluster serves goes to them; a cluster not yet collected waits",
			resource: deployment,
			want: Result{Targets: targets("member1", 0, "member2", 0, "member3", 0),
				LacksAPI: lacks("member4", unknown)},
			status: metav1.ConditionTrue, reason: "Success",
			message: "Binding has been scheduled successfully. 1 cluster(s) did not have the API resource: " +
				"apps/v1, kind=Deployment is not known to be served by member4 (their API enablements are incomplete or not yet collected); " +
				"each is placed as soon as it serves it.",
		},
		{
			name:     "a custom kind goes only where it is served; complete lists without it and partial ones are named apart",
			resource: widget,
			want: Result{Targets: targets("member1", 0),
				LacksAPI: lacks("member2", disabled, "member3", unknown, "member4", unknown)},
			status: metav1.ConditionTrue, reason: "Success",
			message: "Binding has been scheduled successfully. 3 cluster(s) did not have the API resource: " +
				"example.com/v1, kind=Widget is not served by member2 and not known to be served by member3, member4 " +
				"(their API enablements are incomplete or not yet collected); each is placed as soon as it serves it.",
		},
		{
			name:     "a core kind is matched by its group version v1",
			resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap"},
			want: Result{Targets: targets("member1", 0, "member2", 0),
				LacksAPI: lacks("member3", unknown, "member4", unknown)},
			status: metav1.ConditionTrue, reason: "Success",
			message: "Binding has been scheduled successfully. 2 cluster(s) did not have the API resource: " +
				"v1, kind=ConfigMap is not known to be served by member3, member4 " +
				"(their API enablements are incomplete or not yet collected); each is placed as soon as it serves it.",
		},
		{
			name:      "a cluster the binding already targets stays, whether or not it serves the kind",
			resource:  widget,
			scheduled: targets("member2", 0, "member4", 0),
			want: Result{Targets: targets("member1", 0, "member2", 0, "member4", 0),
				LacksAPI: lacks("member3", unknown)},
			status: metav1.ConditionTrue, reason: "Success",
			message: "Binding has been scheduled successfully. 1 cluster(s) did not have the API resource: " +
				"example.com/v1, kind=Widget is not known to be served by member3 " +
				"(their API enablements are incomplete or not yet collected); each is placed as soon as it serves it.",
		},
		{
			name:     "a kind no cluster serves: NoClusterFit with Karmada's FitError message, then the clusters",
			resource: workv1alpha2.ObjectReference{APIVersion: "example.com/v2", Kind: "Widget"},
			want:     Result{LacksAPI: lacks("member1", disabled, "member2", disabled, "member3", unknown, "member4", unknown)},
			status:   metav1.ConditionFalse, reason: "NoClusterFit",
			message: "0/5 clusters are available: 4 cluster(s) did not have the API resource. " +
				"example.com/v2, kind=Widget is not served by member1, member2 and not known to be served by member3, member4 " +
				"(their API enablements are incomplete or not yet collected); each is placed as soon as it serves it.",
		},
		{
			name:      "clusters outside the affinity are counted apart and not named",
			resource:  widget,
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "retiring"}}},
			want:      Result{LacksAPI: lacks("member2", disabled)},
			status:    metav1.ConditionFalse, reason: "NoClusterFit",
			message: "0/5 clusters are available: 1 cluster(s) did not have the API resource, 3 cluster(s) did not match the placement cluster affinity constraint. " +
				"example.com/v1, kind=Widget is not served by member2; each is placed as soon as it serves it.",
		},
		{
			name:      "an affinity that selects nothing says so in Karmada's words",
			resource:  deployment,
			placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"nope"}}},
			want:      Result{Unknown: []string{"nope"}},
			status:    metav1.ConditionFalse, reason: "NoClusterFit",
			message: "0/5 clusters are available: 4 cluster(s) did not match the placement cluster affinity constraint.",
		},
		{
			name:     "clusterAffinities: a term whose clusters lack the kind falls through to the next",
			resource: widget,
			placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
				{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
				{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			}},
			want:   Result{Targets: targets("member1", 0)},
			status: metav1.ConditionTrue, reason: "Success",
			message: "Binding has been scheduled successfully.",
		},
		{
			name:     "clusterAffinities: when no term fits, the first term's failure is reported, as Karmada does",
			resource: widget,
			placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
				{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
				{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3", "member4"}}},
			}},
			want:   Result{LacksAPI: lacks("member2", disabled)},
			status: metav1.ConditionFalse, reason: "NoClusterFit",
			message: "0/5 clusters are available: 1 cluster(s) did not have the API resource, 3 cluster(s) did not match the placement cluster affinity constraint. " +
				"example.com/v1, kind=Widget is not served by member2; each is placed as soon as it serves it.",
		},
		{
			name:      "divided replicas go only to the clusters that serve the kind",
			resource:  workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap"},
			placement: &policyv1alpha1.Placement{ReplicaScheduling: divided()},
			replicas:  5,
			want: Result{Targets: targets("member1", 3, "member2", 2),
				LacksAPI: lacks("member3", unknown, "member4", unknown)},
			status: metav1.ConditionTrue, reason: "Success",
			message: "Binding has been scheduled successfully. 2 cluster(s) did not have the API resource: " +
				"v1, kind=ConfigMap is not known to be served by member3, member4 " +
				"(their API enablements are incomplete or not yet collected); each is placed as soon as it serves it.",
		},
		{
			name:     "no cluster registered",
			resource: deployment,
			clusters: []clusterv1alpha1.Cluster{},
			status:   metav1.ConditionFalse, reason: "NoClusterFit",
			message: "0/0 clusters are available: no cluster exists.",
		},
		{
			name:     "only a deleting cluster",
			resource: deployment,
			clusters: apiFleet()[2:3],
			status:   metav1.ConditionFalse, reason: "NoClusterFit",
			message: "0/1 clusters are available: no cluster exists.",
		},
		{
			name:     "a large fleet lacking the kind is named in part",
			resource: widget,
			clusters: func() []clusterv1alpha1.Cluster {
				var out []clusterv1alpha1.Cluster
				for i := 1; i <= 12; i++ {
					out = append(out, clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("m%02d", i)},
						Status: clusterv1alpha1.ClusterStatus{APIEnablements: served("apps/v1/Deployment"), Conditions: complete(metav1.ConditionTrue)}})
				}
				return out
			}(),
			want: Result{LacksAPI: lacks("m01", disabled, "m02", disabled, "m03", disabled, "m04", disabled, "m05", disabled, "m06", disabled,
				"m07", disabled, "m08", disabled, "m09", disabled, "m10", disabled, "m11", disabled, "m12", disabled)},
			status: metav1.ConditionFalse, reason: "NoClusterFit",
			message: "0/12 clusters are available: 12 cluster(s) did not have the API resource. " +
				"example.com/v1, kind=Widget is not served by m01, m02, m03, m04, m05, m06, m07, m08, m09, m10 and 2 more; " +
				"each is placed as soon as it serves it.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clusters := tt.clusters
			if clusters == nil {
				clusters = apiFleet()
			}
			spec := &workv1alpha2.ResourceBindingSpec{Resource: tt.resource, Placement: tt.placement,
				Replicas: tt.replicas, Clusters: tt.scheduled}
			got, err := PlaceBinding(spec, clusters, "")
			if err != nil {
				t.Fatal(err)
			}
			if d := decided(got); !reflect.DeepEqual(d, tt.want) {
				t.Errorf("got  %+v\nwant %+v", d, tt.want)
			}
			cond := got.Scheduled()
			if cond.Type != "Scheduled" || cond.Status != tt.status || cond.Reason != tt.reason || cond.Message != tt.message {
				t.Errorf("Scheduled condition:\ngot  %s %s %q\nwant %s %s %q", cond.Status, cond.Reason, cond.Message, tt.status, tt.reason, tt.message)
			}
		})
	}
}

// TestPlaceIgnoresAPIEnablements: without a template (the policy
// controller's check), no cluster is kept out for its APIs, and the result
// is PlaceBinding's for a kind every cluster serves.
func TestPlaceIgnoresAPIEnablements(t *testing.T) {
	got, err := Place(nil, apiFleet(), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := Result{Targets: targets("member1", 0, "member2", 0, "member3", 0, "member4", 0)}
	if d := decided(got); !reflect.DeepEqual(d, want) {
		t.Errorf("got  %+v\nwant %+v", d, want)
	}
	if c := got.Scheduled(); c.Message != "Binding has been scheduled successfully." {
		t.Errorf("message %q", c.Message)
	}
}
