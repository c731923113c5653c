package binding

import (
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestAPIEnablementsChangedPassesWhatPlacementReads(t *testing.T) {
	withCondition := func(c *clusterv1alpha1.Cluster, status metav1.ConditionStatus) *clusterv1alpha1.Cluster {
		c = c.DeepCopy()
		c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: status}}
		return c
	}
	base := servingDeployments("member1")
	withCRD := base.DeepCopy()
	withCRD.Status.APIEnablements = append(withCRD.Status.APIEnablements, clusterv1alpha1.APIEnablement{
		GroupVersion: "example.com/v1", Resources: []clusterv1alpha1.APIResource{{Name: "widgets", Kind: "Widget"}}})
	readyChanged := base.DeepCopy()
	readyChanged.Status.Conditions = append(readyChanged.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse})
	versionChanged := base.DeepCopy()
	versionChanged.Status.KubernetesVersion = "v1.35.0"
	tests := []struct {
		name     string
		old, new *clusterv1alpha1.Cluster
		want     bool
	}{
		{"a CRD installed in the member", base, withCRD, true},
		{"a CRD removed from the member", withCRD, base, true},
		{"the list became partial", base, withCondition(base, metav1.ConditionFalse), true},
		{"the list was not collected before", &clusterv1alpha1.Cluster{}, base, true},
		{"only Ready changed", base, readyChanged, false},
		{"only the version changed", base, versionChanged, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (apiEnablementsChanged{}).Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.want {
				t.Errorf("Update = %v, want %v", got, tt.want)
			}
		})
	}
}
