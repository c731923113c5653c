package main

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A stored version's window starts at the last write that may have
// written it: not a status write (the members' controllers with
// --workloads, or --ready-deployments), nor a member controller's write
// of the object itself (the deployment controller's revision annotation),
// which a recorder's first version after a gap would otherwise be judged
// from.
func TestAStoresWindowLeavesOutTheMembersOwnControllers(t *testing.T) {
	entry := func(manager, subresource string, ms int) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource,
			Time: &metav1.Time{Time: at(ms)}}
	}
	u := &unstructured.Unstructured{}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		entry("federator", "", 1000),
		entry("kube-controller-manager", "", 3000),
		entry("kube-controller-manager", "status", 5000),
		entry(readyOwner, "status", 7000),
	})
	if got := lastWrite(u); !got.Equal(at(1000)) {
		t.Fatalf("last write at %s, want the federator's at %s", got.Format(time.RFC3339Nano), at(1000).Format(time.RFC3339Nano))
	}
	// Anyone else's write of the object counts: it may have written the
	// version (--self-test's does).
	u.SetManagedFields(append(u.GetManagedFields(), entry(selfTestOwner, "", 9000)))
	if got := lastWrite(u); !got.Equal(at(9000)) {
		t.Fatalf("last write at %s, want the self-test's at %s", got.Format(time.RFC3339Nano), at(9000).Format(time.RFC3339Nano))
	}
}
