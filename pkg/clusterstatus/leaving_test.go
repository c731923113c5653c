package clusterstatus

import (
	"context"
	"net/http"
	"net/http/httptest"
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

// TestLeavingClusterIsStillProbed: a Cluster being deleted whose member
// stops answering is recorded not Ready, so the dispatcher lets its Works
// go rather than waiting on a member it cannot reach.
func TestLeavingClusterIsStillProbed(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	now := metav1.Now()
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "leaves", DeletionTimestamp: &now,
		Finalizers: []string{"karmada.io/cluster-controller"}},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady,
			Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: now}}}}
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithStatusSubresource(&clusterv1alpha1.Cluster{}).
		WithObjects(cluster).Build()
	config := func(context.Context, string) (*rest.Config, error) { return &rest.Config{Host: down.URL}, nil }
	r := NewReconciler(hub, config, record.NewFakeRecorder(10), time.Hour, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer queue.ShutDown()
	if err := r.probes.source().Start(ctx, queue); err != nil {
		t.Fatal(err)
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "leaves"}}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		got := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "leaves"}, got); err != nil {
			t.Fatal(err)
		}
		if meta.IsStatusConditionFalse(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a leaving Cluster whose member does not answer is still Ready: %+v", got.Status.Conditions)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
