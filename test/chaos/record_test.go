package main

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/federator-dev/federator/test/framework"
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

// Deletions are those the watch delivered, and those a relist after a gap
// shows: the copy seen last before the gap is absent after it, or there
// under another UID (deleted and created again: a copy whose countdown
// was taken back keeps its UID).
func TestRemovalsInARecordersGaps(t *testing.T) {
	copyOf := func(uid, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetUID(types.UID(uid))
		u.SetResourceVersion(rv)
		return u
	}
	v := func(ev watch.EventType, uid, rv string, ms int) framework.Version {
		return framework.Version{Event: ev, Object: copyOf(uid, rv), Observed: at(ms)}
	}
	listed := []time.Time{{}, at(5000)}
	for _, tc := range []struct {
		name     string
		segments [][]framework.Version
		want     []string // uid@observed, "gap" marked
	}{
		{"a deletion the watch delivered", [][]framework.Version{{v(framework.Existing, "a", "1", 0), v(watch.Deleted, "a", "2", 1000)}},
			[]string{"a@1000"}},
		{"the same copy after the gap", [][]framework.Version{{v(framework.Existing, "a", "1", 0)}, {v(framework.Existing, "a", "3", 5000)}},
			nil},
		{"another UID after the gap", [][]framework.Version{{v(framework.Existing, "a", "1", 0)}, {v(framework.Existing, "b", "3", 5000)}},
			[]string{"a@5000 gap"}},
		{"absent after the gap", [][]framework.Version{{v(framework.Existing, "a", "1", 0), v(watch.Modified, "a", "2", 500)}, {}},
			[]string{"a@5000 gap"}},
		{"deleted before the gap, created after it", [][]framework.Version{{v(framework.Existing, "a", "1", 0), v(watch.Deleted, "a", "2", 1000)},
			{v(framework.Existing, "b", "3", 5000)}}, []string{"a@1000"}},
		{"absent before and after the gap", [][]framework.Version{{}, {}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range removalsOf("web", "member1", tc.segments, listed) {
				s := fmt.Sprintf("%s@%d", r.UID, r.Observed.Sub(at(0)).Milliseconds())
				if r.InGap {
					s += " gap"
				}
				got = append(got, s)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("removals %q, want %q", got, tc.want)
			}
		})
	}
}
