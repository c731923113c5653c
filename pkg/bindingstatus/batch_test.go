package bindingstatus

import (
	"context"
	"testing"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"

	"github.com/federator-dev/federator/internal/batch"
	"github.com/federator-dev/federator/internal/bindingview"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The status changes of one binding's Works, reported by every member at
// nearly the same moment, bring one aggregation (one binding status write),
// not one per member.
func TestStatusChangesOfOneBindingAreBatched(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := batch.Handler(bindingview.OfWork(false), 20*time.Millisecond)
	work := func(cluster string) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-" + cluster, Name: "web-1",
			Annotations: map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotationKey: "shop",
				workv1alpha2.ResourceBindingNameAnnotationKey: "web-deployment"}}}
	}
	for _, m := range []string{"member1", "member2", "member3"} {
		h.Update(context.Background(), event.UpdateEvent{ObjectOld: work(m), ObjectNew: work(m)}, q)
	}
	if n := q.Len(); n != 0 {
		t.Fatalf("%d requests ready at once, want none before the batch delay", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for q.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // room for a second request, were there one
	if n := q.Len(); n != 1 {
		t.Fatalf("%d requests after three members reported, want 1", n)
	}
	r, _ := q.Get()
	if r.Namespace != "shop" || r.Name != "web-deployment" {
		t.Errorf("request %v, want shop/web-deployment", r)
	}
}
