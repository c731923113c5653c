package binding

import (
	"reflect"
	"testing"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestDeploymentStatus(t *testing.T) {
	item := func(cluster, status string) workv1alpha2.AggregatedStatusItem {
		i := workv1alpha2.AggregatedStatusItem{ClusterName: cluster}
		if status != "" {
			i.Status = &runtime.RawExtension{Raw: []byte(status)}
		}
		return i
	}
	both := map[string]bool{"member1": true, "member2": true}
	for _, tc := range []struct {
		name    string
		items   []workv1alpha2.AggregatedStatusItem
		current map[string]bool
		want    appsv1.DeploymentStatus
	}{
		{"sums replica counts and observes the template once every member runs it",
			[]workv1alpha2.AggregatedStatusItem{
				item("member1", `{"replicas":2,"readyReplicas":2,"updatedReplicas":2,"availableReplicas":2,"observedGeneration":3,"generation":3}`),
				item("member2", `{"replicas":3,"readyReplicas":1,"updatedReplicas":3,"availableReplicas":1,"unavailableReplicas":2,"observedGeneration":5,"generation":5}`),
			}, both,
			appsv1.DeploymentStatus{Replicas: 5, ReadyReplicas: 3, UpdatedReplicas: 5, AvailableReplicas: 3, UnavailableReplicas: 2, ObservedGeneration: 9}},
		{"a suspended member keeps the old observedGeneration but still counts",
			[]workv1alpha2.AggregatedStatusItem{
				item("member1", `{"replicas":2,"readyReplicas":2,"observedGeneration":3,"generation":3}`),
				item("member2", `{"replicas":2,"readyReplicas":2,"observedGeneration":5,"generation":5}`),
			}, map[string]bool{"member1": true},
			appsv1.DeploymentStatus{Replicas: 4, ReadyReplicas: 4, ObservedGeneration: 7}},
		{"a member controller that has not observed its spec keeps the old observedGeneration",
			[]workv1alpha2.AggregatedStatusItem{
				item("member1", `{"replicas":2,"observedGeneration":2,"generation":3}`),
				item("member2", `{"replicas":2,"observedGeneration":5,"generation":5}`),
			}, both,
			appsv1.DeploymentStatus{Replicas: 4, ObservedGeneration: 7}},
		{"a member without status yet keeps the old observedGeneration",
			[]workv1alpha2.AggregatedStatusItem{
				item("member1", `{"replicas":2,"observedGeneration":3,"generation":3}`),
				item("member2", ""),
			}, both,
			appsv1.DeploymentStatus{Replicas: 2, ObservedGeneration: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DeploymentStatus(tc.items, tc.current, 9, appsv1.DeploymentStatus{ObservedGeneration: 7})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
