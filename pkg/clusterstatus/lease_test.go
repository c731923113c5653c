package clusterstatus

import (
	"context"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterkeys "github.com/federator-dev/federator/apis/cluster"
	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fixture"
)

// TestPullClusterTurnsUnknownWhenItsAgentStopsReporting: on the hub, a
// Pull cluster stays as its agent reported it while the agent renews its
// Lease, however long; once neither Lease nor status changes for the
// grace period, by the hub's clock, Ready is Unknown with Karmada's reason
// and a Warning Event; a cluster no agent ever reported for says so.
func TestPullClusterTurnsUnknownWhenItsAgentStopsReporting(t *testing.T) {
	const grace = 40 * time.Second
	ready := metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
		Reason: clusterkeys.ReasonClusterReady, Message: clusterkeys.MessageClusterReady, LastTransitionTime: metav1.Now()}
	for _, c := range []struct {
		name string
		// reported: the agent wrote Ready; renewing: it renews its Lease
		// every 10 s throughout.
		reported, renewing bool
		wantStatus         metav1.ConditionStatus
		wantReason         string
	}{
		{"an agent that renews its Lease keeps its cluster as it reported it", true, true, metav1.ConditionTrue, clusterkeys.ReasonClusterReady},
		{"an agent that stopped renewing leaves its cluster Unknown", true, false, metav1.ConditionUnknown, clusterkeys.ReasonClusterStatusUnknown},
		{"a cluster no agent ever reported for is Unknown, saying so", false, false, metav1.ConditionUnknown, clusterkeys.ReasonClusterStatusNeverUpdated},
	} {
		t.Run(c.name, func(t *testing.T) {
			cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge1"},
				Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
			if c.reported {
				cluster.Status.Conditions = []metav1.Condition{ready}
			}
			clk := clocktesting.NewFakeClock(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
			renewed := metav1.NewMicroTime(clk.Now())
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: clusterkeys.LeaseNamespace, Name: "edge1"},
				Spec: coordinationv1.LeaseSpec{RenewTime: &renewed}}
			hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithStatusSubresource(&clusterv1alpha1.Cluster{}).
				WithObjects(cluster, lease).Build()
			recorder := record.NewFakeRecorder(10)
			r := NewReconciler(hub, nil, recorder, 5*time.Second, time.Second)
			r.Leases, r.GracePeriod, r.Clock = hub, grace, clk
			req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "edge1"}}
			// Two minutes, a pass every 5 s as the hub's Interval paces them.
			for range 24 {
				if _, err := r.Reconcile(context.Background(), req); err != nil {
					t.Fatal(err)
				}
				clk.Step(5 * time.Second)
				if c.renewing && clk.Now().Second()%10 == 0 {
					renewed := metav1.NewMicroTime(clk.Now())
					lease.Spec.RenewTime = &renewed
					if err := hub.Update(context.Background(), lease); err != nil {
						t.Fatal(err)
					}
				}
			}
			got := &clusterv1alpha1.Cluster{}
			if err := hub.Get(context.Background(), client.ObjectKey{Name: "edge1"}, got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
			if cond == nil || cond.Status != c.wantStatus || cond.Reason != c.wantReason {
				t.Fatalf("Ready = %+v; want %s %s", cond, c.wantStatus, c.wantReason)
			}
			events := fixture.Events(recorder)
			if c.wantStatus == metav1.ConditionUnknown && (len(events) != 1 || events[0] != "Warning "+c.wantReason+" "+cond.Message) {
				t.Errorf("events = %q; want one Warning %s", events, c.wantReason)
			}
			if c.wantStatus == metav1.ConditionTrue && len(events) != 0 {
				t.Errorf("events = %q; want none", events)
			}
		})
	}
}
