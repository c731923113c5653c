package holdqueue

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func names(_ context.Context, o client.Object) []string { return []string{o.GetName()} }

func cm(name string, annotations map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
}

// A hold change added behind a bulk of ordinary changes is taken first;
// the initial list comes last.
func TestHandlerPutsHoldChangesFirst(t *testing.T) {
	q := priorityqueue.New[string]("test")
	defer q.ShutDown()
	urgent := func(old, new client.Object) bool { return old.GetAnnotations()["hold"] != new.GetAnnotations()["hold"] }
	h := Handler(names, urgent)
	ctx := context.Background()
	h.Create(ctx, event.TypedCreateEvent[client.Object]{Object: cm("listed", nil), IsInInitialList: true}, q)
	for _, n := range []string{"bulk-1", "bulk-2", "bulk-3"} {
		h.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: cm(n, nil), ObjectNew: cm(n, map[string]string{"image": "v2"})}, q)
	}
	h.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: cm("frozen", nil), ObjectNew: cm("frozen", map[string]string{"hold": "yes"})}, q)
	h.Create(ctx, event.TypedCreateEvent[client.Object]{Object: cm("new", nil)}, q)

	want := []struct {
		name     string
		priority int
	}{{"frozen", Hold}, {"bulk-1", 0}, {"bulk-2", 0}, {"bulk-3", 0}, {"new", 0}, {"listed", Low}}
	for _, w := range want {
		item, p, _ := q.GetWithPriority()
		if item != w.name || p != w.priority {
			t.Fatalf("next: %s at priority %d, want %s at %d", item, p, w.name, w.priority)
		}
		q.Done(item)
	}
}

// With no urgent function every event is a hold change (a gate, a
// rollout's release).
func TestHandlerWithoutUrgentIsAllHolds(t *testing.T) {
	q := priorityqueue.New[string]("test")
	defer q.ShutDown()
	h := Handler(names, nil)
	h.Update(context.Background(), event.TypedUpdateEvent[client.Object]{ObjectOld: cm("gate", nil), ObjectNew: cm("gate", nil)}, q)
	if item, p, _ := q.GetWithPriority(); item != "gate" || p != Hold {
		t.Fatalf("got %s at %d, want gate at %d", item, p, Hold)
	}
}

// A queue that is not a priority queue still gets every item.
func TestAddToAPlainQueue(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer q.ShutDown()
	Add(q, Hold, "a", "b")
	if q.Len() != 2 {
		t.Fatalf("queue holds %d items, want 2", q.Len())
	}
}
