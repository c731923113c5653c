package softdelete

import (
	"context"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/countdown"
)

// TestPullClusterCountdownsAreItsAgents: a due countdown of a Pull cluster
// is left by the hub's controller to the cluster's agent, which ends it;
// an agent's controller ends none of a Push cluster's.
func TestPullClusterCountdownsAreItsAgents(t *testing.T) {
	for _, c := range []struct {
		name   string
		mode   clusterv1alpha1.ClusterSyncMode
		agent  bool
		delete bool
	}{
		{"the hub ends a Push cluster's countdown", clusterv1alpha1.Push, false, true},
		{"the hub leaves a Pull cluster's countdown to its agent", clusterv1alpha1.Pull, false, false},
		{"the agent ends its Pull cluster's countdown", clusterv1alpha1.Pull, true, true},
		{"an agent leaves a Push cluster's countdown to the hub", clusterv1alpha1.Push, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ct := newCountdownTest(t, "10m", nil)
			cluster := &clusterv1alpha1.Cluster{}
			if err := ct.hub.Get(context.Background(), client.ObjectKey{Name: "member3"}, cluster); err != nil {
				t.Fatal(err)
			}
			cluster.Spec.SyncMode = c.mode
			if err := ct.hub.Update(context.Background(), cluster); err != nil {
				t.Fatal(err)
			}
			ct.clock.Step(10 * time.Minute)
			r := &Reconciler{Hub: ct.hub, Tombstones: ct.hub, Members: staticMembers{"member3": ct.member}, Recorder: ct.recorder,
				Clock: ct.clock, MaxDelay: countdown.DefaultMaxDelay, Pull: c.agent}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ct.tombstone.ConfigMap())}); err != nil {
				t.Fatal(err)
			}
			if deleted := !ct.memberHasIt(); deleted != c.delete {
				t.Errorf("member object deleted: %v, want %v", deleted, c.delete)
			}
			if left := ct.tombstoneLeft(); left == c.delete {
				t.Errorf("tombstone left: %v, want %v", left, !c.delete)
			}
		})
	}
}
