package dispatch

import (
	"net/http/httptest"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

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
