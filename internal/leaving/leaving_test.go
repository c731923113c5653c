package leaving

import (
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func readyCondition(ready bool) []metav1.Condition {
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	return []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status}}
}

func TestDeletionOf(t *testing.T) {
	now := metav1.Now()
	cluster := func(leaving, ready bool) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{Status: clusterv1alpha1.ClusterStatus{Conditions: readyCondition(ready)}}
		if leaving {
			c.DeletionTimestamp = &now
		}
		return c
	}
	work := func(preserve bool) *workv1alpha1.Work {
		return &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{PreserveResourcesOnDeletion: ptr.To(preserve)}}
	}
	for _, c := range []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		preserve bool
		want     OnDeletion
	}{
		{"a staying Ready cluster has the objects removed, countdowns and all", cluster(false, true), false, RemoveObjects},
		{"a staying cluster not Ready is still tried (its Ready may lag)", cluster(false, false), false, RemoveObjects},
		{"a leaving Ready cluster has them deleted at once (what Keeps keeps aside)", cluster(true, true), false, RemoveLeaving},
		{"a leaving cluster not Ready is not touched, so it can leave", cluster(true, false), false, LeaveObjects},
		{"a cluster that is gone is not touched", nil, false, LeaveObjects},
		{"a Work that preserves its resources leaves them, staying cluster", cluster(false, true), true, LeaveObjects},
		{"a Work that preserves its resources leaves them, leaving cluster", cluster(true, true), true, LeaveObjects},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := DeletionOf(c.cluster, work(c.preserve)); got != c.want {
				t.Errorf("DeletionOf = %v, want %v", got, c.want)
			}
		})
	}
}

func TestLeavingKeeps(t *testing.T) {
	for _, c := range []struct {
		kind    string
		delayed bool
		kept    bool
	}{
		{"Deployment", false, false},
		{"Deployment", true, true},
		{"Namespace", false, true},
		{"ConfigMap", true, true},
	} {
		if _, kept := Keeps(c.kind, c.delayed); kept != c.kept {
			t.Errorf("Keeps(%s, delayed %v) = %v, want %v", c.kind, c.delayed, kept, c.kept)
		}
	}
}
