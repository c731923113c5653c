package dispatch

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/federator-dev/federator/apis/policy"
)

// /readyz waits, on the replica that runs the member controllers, until
// every registered Cluster's member client was set up once (or tried).
func TestReadyOnceEveryMemberIsSetUp(t *testing.T) {
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}).Build()
	r := &clusterReconciler{started: make(chan struct{}), running: map[string]*member{}, setUp: map[string]bool{}}
	check := r.membersSetUp(hub)
	req := httptest.NewRequest("GET", "/readyz", nil)
	if err := check(req); err != nil {
		t.Fatalf("a replica that does not lead: %v, want ready", err)
	}
	close(r.started)
	r.setUp["member1"] = true
	err := check(req)
	if err == nil || !strings.Contains(err.Error(), "member2") || strings.Contains(err.Error(), "member1") {
		t.Fatalf("member2 not set up: got %v, want an error naming member2 alone", err)
	}
	r.setUp["member2"] = true
	if err := check(req); err != nil {
		t.Fatalf("every member set up: %v", err)
	}
}

// A Cluster being deleted when the replica starts counts as set up once its
// member controller runs again: /readyz does not wait for it to go.
func TestReadyWithAClusterBeingDeleted(t *testing.T) {
	now := metav1.Now()
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1", DeletionTimestamp: &now,
			Finalizers: []string{"karmada.io/cluster-controller", "example.com/another"}}}).Build()
	// A manager context that has ended: join starts no member controller.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &clusterReconciler{hub: hub, started: make(chan struct{}), ctx: ctx, running: map[string]*member{}, setUp: map[string]bool{}}
	close(r.started)
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "member1"}}); err != nil {
		t.Fatal(err)
	}
	if err := r.membersSetUp(hub)(httptest.NewRequest("GET", "/readyz", nil)); err != nil {
		t.Fatalf("a Cluster being deleted holds /readyz: %v", err)
	}
}

// A member's Works are queued again when its Cluster turns Ready, not when
// it stops being ready (each would wait out the member request timeout).
func TestWorksQueuedWhenTheClusterBecomesReady(t *testing.T) {
	cluster := func(ready metav1.ConditionStatus) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
		if ready != "" {
			c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: ready}}
		}
		return c
	}
	for _, c := range []struct {
		name     string
		old, new metav1.ConditionStatus
		want     bool
	}{
		{"comes back", metav1.ConditionFalse, metav1.ConditionTrue, true},
		{"first ready", "", metav1.ConditionTrue, true},
		{"from Unknown", metav1.ConditionUnknown, metav1.ConditionTrue, true},
		{"goes unreachable", metav1.ConditionTrue, metav1.ConditionFalse, false},
		{"goes Unknown", metav1.ConditionTrue, metav1.ConditionUnknown, false},
		{"stays ready", metav1.ConditionTrue, metav1.ConditionTrue, false},
		{"not ready, another reason", metav1.ConditionFalse, metav1.ConditionUnknown, false},
	} {
		if got := (becameReady{}).Update(event.UpdateEvent{ObjectOld: cluster(c.old), ObjectNew: cluster(c.new)}); got != c.want {
			t.Errorf("%s (%q → %q): queued = %v, want %v", c.name, c.old, c.new, got, c.want)
		}
	}
}
