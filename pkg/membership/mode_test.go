package membership

import (
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
)

// A Cluster that names no mode is pushed to, and says so.
func TestMode(t *testing.T) {
	for mode, want := range map[clusterv1alpha1.ClusterSyncMode]string{"": "Push", clusterv1alpha1.Push: "Push", clusterv1alpha1.Pull: "Pull"} {
		if got := Mode(&clusterv1alpha1.Cluster{Spec: clusterv1alpha1.ClusterSpec{SyncMode: mode}}); got != want {
			t.Errorf("syncMode %q: mode %q, want %q", mode, got, want)
		}
	}
}
