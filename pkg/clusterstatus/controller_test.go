package clusterstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
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

// TestHungMembersDelayNoOther: with one worker and six members whose API
// servers never answer, the healthy members are Ready while every hung
// probe is still in flight; the hung ones are recorded NotReady once their
// probes end, and stopping the probes ends those still waiting.
func TestHungMembersDelayNoOther(t *testing.T) {
	release := make(chan struct{})
	var arrived atomic.Int32
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		select {
		case <-release:
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		case <-r.Context().Done():
		}
	}))
	defer hung.Close()
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"gitVersion":"v1.34.1"}`)
	}))
	defer healthy.Close()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		<-r.Context().Done()
	}))
	defer silent.Close()
	var hungURL atomic.Value
	hungURL.Store(hung.URL)

	hungMembers := []string{"hung1", "hung2", "hung3", "hung4", "hung5", "hung6"}
	healthyMembers := []string{"ok1", "ok2"}
	builder := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithStatusSubresource(&clusterv1alpha1.Cluster{})
	for _, name := range append(slices.Clone(hungMembers), healthyMembers...) {
		builder = builder.WithObjects(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	hub := builder.Build()
	config := func(_ context.Context, cluster string) (*rest.Config, error) {
		if slices.Contains(hungMembers, cluster) {
			return &rest.Config{Host: hungURL.Load().(string)}, nil
		}
		return &rest.Config{Host: healthy.URL}, nil
	}
	// Probes end only when the test says so, whatever the machine's speed.
	r := NewReconciler(hub, config, record.NewFakeRecorder(100), time.Hour, time.Hour)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	if err := r.probes.source().Start(ctx, queue); err != nil {
		t.Fatal(err)
	}
	probesStopped := make(chan error, 1)
	go func() { probesStopped <- r.probes.Start(ctx) }()
	// One worker, as if the others were all taken: the hung members are
	// queued first.
	workerDone := make(chan struct{})
	defer func() {
		cancel() // ends a probe the worker may be stuck in
		queue.ShutDown()
		<-workerDone
	}()
	go func() {
		defer close(workerDone)
		for {
			req, shutdown := queue.Get()
			if shutdown {
				return
			}
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Errorf("reconcile %s: %v", req.Name, err)
			}
			queue.Done(req)
		}
	}()
	for _, name := range append(slices.Clone(hungMembers), healthyMembers...) {
		queue.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	}

	ready := func(status metav1.ConditionStatus) []string {
		var names []string
		for _, name := range append(slices.Clone(hungMembers), healthyMembers...) {
			c := &clusterv1alpha1.Cluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
				t.Fatal(err)
			}
			if meta.IsStatusConditionPresentAndEqual(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady, status) {
				names = append(names, name)
			}
		}
		return names
	}
	// waitFor only detects a deadlock; nothing here measures speed.
	waitFor := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s (Ready: %v, NotReady: %v, probes arrived at hung members: %d of %d)",
					what, ready(metav1.ConditionTrue), ready(metav1.ConditionFalse), arrived.Load(), len(hungMembers))
			}
		}
	}

	waitFor("healthy members Ready while every hung member's probe is in flight", func() bool {
		return slices.Equal(ready(metav1.ConditionTrue), healthyMembers) && int(arrived.Load()) == len(hungMembers)
	})
	if notReady := ready(metav1.ConditionFalse); len(notReady) > 0 {
		t.Errorf("members recorded NotReady before their probes ended: %v", notReady)
	}

	close(release)
	waitFor("hung members NotReady once their probes end", func() bool {
		return slices.Equal(ready(metav1.ConditionFalse), hungMembers)
	})

	// Probes in flight when the controller stops are cancelled and waited
	// for: the hung members now never answer at all.
	hungURL.Store(silent.URL)
	before := arrived.Load()
	for _, name := range hungMembers {
		queue.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	}
	waitFor("the next probes of the hung members are in flight", func() bool {
		return arrived.Load() == before+int32(len(hungMembers))
	})
	cancel()
	select {
	case err := <-probesStopped:
		if err != nil {
			t.Errorf("probes: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("probes in flight were not stopped with the controller")
	}
}
