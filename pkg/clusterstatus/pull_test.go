package clusterstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/federator-dev/federator/apis/policy"
)

// TestEachSideKeepsItsOwnClusters: the hub's controller keeps the status
// of Push clusters and leaves a Pull cluster's to its agent; an agent's
// keeps its Pull cluster's and never touches a Push cluster. The side a
// Cluster is not for never probes it, nor writes its status.
func TestEachSideKeepsItsOwnClusters(t *testing.T) {
	member := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"gitVersion":"v1.34.1"}`)
	}))
	defer member.Close()
	for _, c := range []struct {
		name   string
		agent  bool
		mode   clusterv1alpha1.ClusterSyncMode
		probed bool
	}{
		{"the hub keeps a Push cluster's status", false, clusterv1alpha1.Push, true},
		{"the hub leaves a Pull cluster's status to its agent", false, clusterv1alpha1.Pull, false},
		{"an agent keeps its Pull cluster's status", true, clusterv1alpha1.Pull, true},
		{"an agent leaves a Push cluster to the hub", true, clusterv1alpha1.Push, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithStatusSubresource(&clusterv1alpha1.Cluster{}).
				WithObjects(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m"},
					Spec: clusterv1alpha1.ClusterSpec{SyncMode: c.mode}}).Build()
			var asked atomic.Int32
			config := func(context.Context, string) (*rest.Config, error) {
				asked.Add(1)
				return &rest.Config{Host: member.URL}, nil
			}
			r := NewReconciler(hub, config, record.NewFakeRecorder(10), time.Hour, 10*time.Second)
			r.Pull = c.agent
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer queue.ShutDown()
			if err := r.probes.source().Start(ctx, queue); err != nil {
				t.Fatal(err)
			}
			req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "m"}}
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			if c.probed {
				// The probe's end queues the Cluster; that pass records it.
				item, _ := queue.Get()
				queue.Done(item)
				if _, err := r.Reconcile(ctx, item); err != nil {
					t.Fatal(err)
				}
			} else {
				// A probe, had one started, would be queued by now.
				time.Sleep(200 * time.Millisecond)
				if queue.Len() != 0 {
					t.Errorf("a probe of the other side's cluster was started")
				}
			}
			got := &clusterv1alpha1.Cluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "m"}, got); err != nil {
				t.Fatal(err)
			}
			ready := meta.IsStatusConditionTrue(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
			if ready != c.probed || (asked.Load() > 0) != c.probed {
				t.Errorf("probed %d times, Ready %v; want probed and Ready only for its own side's cluster (%v)", asked.Load(), ready, c.probed)
			}
		})
	}
}
