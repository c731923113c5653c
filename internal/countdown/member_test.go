package countdown

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// The end of a countdown forgets its own tombstone only. The same member
// object placed back and deleted again starts a new countdown whose
// tombstone has the same name; the old countdown's end, acted on late (a
// tombstone cache behind), must not delete the new one's record: the
// object would keep its mark and never be deleted, and namespace sync
// would no longer see the countdown that keeps its namespace.
func TestForgetLeavesTheTombstoneOfALaterCountdownOfTheSameObject(t *testing.T) {
	ctx := context.Background()
	hub := fake.NewClientBuilder().Build()
	started := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	countdownOf := func(startedAt time.Time) Tombstone {
		return Tombstone{Cluster: "member3", APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web",
			UID: "u-1", StartedAt: startedAt, Delay: "10m", Due: startedAt.Add(10 * time.Minute)}
	}
	first, created, err := Record(ctx, hub, hub, countdownOf(started))
	if err != nil || !created {
		t.Fatalf("record the first countdown: created %v, %v", created, err)
	}
	second, created, err := Record(ctx, hub, hub, countdownOf(started.Add(3*time.Minute)))
	if err != nil || !created {
		t.Fatalf("record the second countdown: created %v, %v", created, err)
	}

	if err := Forget(ctx, hub, hub, first); err != nil {
		t.Fatalf("forget the first countdown after the second replaced it: %v (want it left alone, no error)", err)
	}
	stored := &corev1.ConfigMap{}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(first.ConfigMap()), stored); err != nil {
		t.Fatalf("the first countdown's end deleted the second countdown's tombstone: %v", err)
	}
	if got, err := FromConfigMap(stored); err != nil || !got.StartedAt.Equal(second.StartedAt) {
		t.Fatalf("tombstone left is %+v (%v), want the second countdown's", got, err)
	}

	if err := Forget(ctx, hub, hub, second); err != nil {
		t.Fatalf("forget the second countdown: %v", err)
	}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(second.ConfigMap()), stored); !apierrors.IsNotFound(err) {
		t.Errorf("the second countdown's end left its tombstone: %v", err)
	}
}

// A tombstone changed since its countdown's end was decided (a deletion
// now asked meanwhile) still records that countdown, and is forgotten.
func TestForgetDeletesItsOwnTombstoneChangedSinceItWasRead(t *testing.T) {
	ctx := context.Background()
	hub := fake.NewClientBuilder().Build()
	started := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	recorded, _, err := Record(ctx, hub, hub, Tombstone{Cluster: "member3", APIVersion: "apps/v1", Kind: "Deployment",
		Namespace: "demo", Name: "web", UID: "u-1", StartedAt: started, Delay: "10m"})
	if err != nil {
		t.Fatal(err)
	}
	stored := &corev1.ConfigMap{}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(recorded.ConfigMap()), stored); err != nil {
		t.Fatal(err)
	}
	stored.Annotations = map[string]string{"softdelete.federator.dev/delete-now": started.Add(time.Minute).Format(time.RFC3339)}
	if err := hub.Update(ctx, stored); err != nil {
		t.Fatal(err)
	}

	if err := Forget(ctx, hub, hub, recorded); err != nil {
		t.Fatalf("forget: %v", err)
	}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(stored), stored); !apierrors.IsNotFound(err) {
		t.Errorf("the countdown's own tombstone, changed since it was read, is left: %v", err)
	}
}
