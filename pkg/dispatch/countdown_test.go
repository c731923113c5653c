package dispatch

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/internal/countdown"
)

// delayedWork is workFixture whose manifest carries a deletion delay.
func delayedWork(t *testing.T, delay string) *workv1alpha1.Work {
	t.Helper()
	w := workFixture(t, false, nil)
	w.Spec.Workload.Manifests[0].RawExtension = runtime.RawExtension{Raw: []byte(strings.Replace(string(w.Spec.Workload.Manifests[0].Raw),
		`"annotations":{`, `"annotations":{"federator.dev/deletion-delay":"`+delay+`",`, 1))}
	return w
}

func TestCountdownStartsInsteadOfDeleting(t *testing.T) {
	startedAt := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, delay, event string
	}{
		{name: "a valid delay starts a countdown", delay: "5s",
			event: "Normal SoftDeletionStarted Deployment shop/web in member1 will be deleted at 2025-03-01T12:00:05Z (deletion delay 5s, countdown started 2025-03-01T12:00:00Z)"},
		{name: "a bad delay keeps the object for good", delay: "24 hours",
			event: `Warning SoftDeletionKept Deployment shop/web in member1 is kept, not deleted: its deletion delay "24 hours" is not a Go duration`},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := delayedWork(t, c.delay)
			d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
			d.r.Clock = clocktesting.NewFakePassiveClock(startedAt)
			d.reconcile(t, w)
			if _, err := d.memberDeployment(); err != nil {
				t.Fatalf("not applied: %v", err)
			}
			_ = d.events()
			if err := d.hub.Delete(context.Background(), d.work(t, w)); err != nil {
				t.Fatal(err)
			}
			d.reconcile(t, w)

			dep, err := d.memberDeployment()
			if err != nil {
				t.Fatalf("the member object is gone at once: %v", err)
			}
			if got := dep.Annotations["federator.dev/deletion-timestamp"]; got != "2025-03-01T12:00:00Z" {
				t.Errorf("deletion-timestamp = %q", got)
			}
			if err := d.hub.Get(context.Background(), client.ObjectKeyFromObject(w), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
				t.Errorf("the Work is not released: %v", err)
			}
			tomb, found, err := countdown.Lookup(context.Background(), d.hub, testCluster, "Deployment", "shop", "web")
			if err != nil || !found || tomb.UID != dep.UID || tomb.Delay != c.delay {
				t.Errorf("tombstone %+v, found %v, err %v", tomb, found, err)
			}
			if events := d.events(); len(events) != 1 || !strings.HasPrefix(events[0], c.event) {
				t.Errorf("events = %q, want %q", events, c.event)
			}

			By := "placing it there again takes the deletion back: same object, mark and tombstone gone"
			again := delayedWork(t, c.delay)
			again.ResourceVersion = ""
			if err := d.hub.Create(context.Background(), again); err != nil {
				t.Fatal(err)
			}
			d.reconcile(t, again)
			adopted, err := d.memberDeployment()
			if err != nil || adopted.UID != dep.UID {
				t.Fatalf("%s: %v, uid %s want %s", By, err, adopted.UID, dep.UID)
			}
			if _, marked := adopted.Annotations["federator.dev/deletion-timestamp"]; marked {
				t.Errorf("%s: still marked", By)
			}
			if err := d.hub.Get(context.Background(), client.ObjectKeyFromObject(tomb.ConfigMap()), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				t.Errorf("%s: tombstone left: %v", By, err)
			}
			events := d.events()
			cancelled := "Normal SoftDeletionCancelled Deployment shop/web in member1 is placed there again"
			if len(events) == 0 || !strings.HasPrefix(events[0], cancelled) {
				t.Errorf("events = %q, want %q first", events, cancelled)
			}
		})
	}
}

func TestNoDelayDeletesAtOnce(t *testing.T) {
	for _, delay := range []string{"", "0s"} {
		w := workFixture(t, false, nil)
		if delay != "" {
			w = delayedWork(t, delay)
		}
		d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
		d.reconcile(t, w)
		_ = d.hub.Delete(context.Background(), d.work(t, w))
		d.reconcile(t, w)
		if _, err := d.memberDeployment(); !apierrors.IsNotFound(err) {
			t.Errorf("delay %q: member object still there: %v", delay, err)
		}
		if list := (&corev1.ConfigMapList{}); d.hub.List(context.Background(), list) == nil && len(list.Items) > 0 {
			t.Errorf("delay %q: tombstones %v", delay, list.Items)
		}
	}
}

func TestHeldWorkTakesItsCountdownBackWithoutApplying(t *testing.T) {
	w := delayedWork(t, "5s")
	d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
	d.reconcile(t, w)
	if err := d.hub.Delete(context.Background(), d.work(t, w)); err != nil {
		t.Fatal(err)
	}
	d.reconcile(t, w)
	dep, err := d.memberDeployment()
	if err != nil || dep.Annotations["federator.dev/deletion-timestamp"] == "" {
		t.Fatalf("no countdown started: %v, annotations %v", err, dep.Annotations)
	}
	_ = d.events()

	again := delayedWork(t, "5s")
	again.ResourceVersion = ""
	again.Spec.SuspendDispatching = ptr.To(true)
	again.Spec.Workload.Manifests[0].Raw = []byte(strings.Replace(string(again.Spec.Workload.Manifests[0].Raw), "nginx:1.25", "nginx:1.26", 1))
	if err := d.hub.Create(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	d.reconcile(t, again)

	kept, err := d.memberDeployment()
	if err != nil || kept.UID != dep.UID {
		t.Fatalf("not the same object: %v, uid %s want %s", err, kept.UID, dep.UID)
	}
	if _, marked := kept.Annotations["federator.dev/deletion-timestamp"]; marked {
		t.Error("still marked: it would be deleted when its delay ends")
	}
	if image := kept.Spec.Template.Spec.Containers[0].Image; image != "nginx:1.25" {
		t.Errorf("the held version reached the member: %s", image)
	}
	if _, found, err := countdown.Lookup(context.Background(), d.hub, testCluster, "Deployment", "shop", "web"); found || err != nil {
		t.Errorf("tombstone left: %v, %v", found, err)
	}
	cancelled := "Normal SoftDeletionCancelled Deployment shop/web in member1 is placed there again"
	if events := d.events(); !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, cancelled) }) {
		t.Errorf("events = %q, want %q", events, cancelled)
	}
}

func TestHeldWorkLeavesTheCountdownOfAnotherObjectToSoftdelete(t *testing.T) {
	w := delayedWork(t, "5s")
	d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
	d.reconcile(t, w)
	_ = d.hub.Delete(context.Background(), d.work(t, w))
	d.reconcile(t, w)
	tomb, found, err := countdown.Lookup(context.Background(), d.hub, testCluster, "Deployment", "shop", "web")
	if err != nil || !found {
		t.Fatalf("no countdown: %v", err)
	}
	// The tombstone names an earlier object of the same name.
	cm := &corev1.ConfigMap{}
	if err := d.hub.Get(context.Background(), client.ObjectKeyFromObject(tomb.ConfigMap()), cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["uid"] = "an-earlier-object"
	if err := d.hub.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}

	again := delayedWork(t, "5s")
	again.ResourceVersion = ""
	again.Spec.SuspendDispatching = ptr.To(true)
	if err := d.hub.Create(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	d.reconcile(t, again)
	kept, err := d.memberDeployment()
	if err != nil {
		t.Fatal(err)
	}
	if _, marked := kept.Annotations["federator.dev/deletion-timestamp"]; marked {
		t.Error("still marked")
	}
	if _, found, _ := countdown.Lookup(context.Background(), d.hub, testCluster, "Deployment", "shop", "web"); !found {
		t.Error("the tombstone of another object was forgotten: it is pkg/softdelete's to end")
	}
}

// A hold that changes only spec.suspendDispatching leaves the member
// running what the Work carries, and the Work's Applied condition says so
// (its observedGeneration is the held generation); a manifest changed while
// held has not reached the member, and Applied stays where it was.
func TestHeldWorkSaysWhetherTheMemberRunsIt(t *testing.T) {
	w := workFixture(t, false, nil)
	d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
	d.reconcile(t, w)
	applied := func() *metav1.Condition {
		return meta.FindStatusCondition(d.work(t, w).Status.Conditions, "Applied")
	}
	if c := applied(); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != 1 {
		t.Fatalf("after the first apply, Applied = %+v", c)
	}
	update := func(gen int64, change func(*workv1alpha1.Work)) {
		t.Helper()
		cur := d.work(t, w)
		cur.Generation = gen
		change(cur)
		if err := d.hub.Update(context.Background(), cur); err != nil {
			t.Fatal(err)
		}
		d.reconcile(t, w)
	}

	update(2, func(w *workv1alpha1.Work) { w.Spec.SuspendDispatching = ptr.To(true) })
	if c := applied(); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != 2 {
		t.Errorf("held with the manifest the member runs: Applied = %+v, want True for generation 2", c)
	}

	update(3, func(w *workv1alpha1.Work) {
		w.Spec.Workload.Manifests[0].Raw = []byte(strings.Replace(string(w.Spec.Workload.Manifests[0].Raw), "nginx:1.25", "nginx:1.26", 1))
	})
	if c := applied(); c == nil || c.ObservedGeneration != 2 {
		t.Errorf("held with a manifest the member does not run: Applied = %+v, want it left at generation 2", c)
	}
	if dep, err := d.memberDeployment(); err != nil || dep.Spec.Template.Spec.Containers[0].Image != "nginx:1.25" {
		t.Errorf("the held version reached the member: %v %v", dep.Spec.Template.Spec.Containers, err)
	}
}

// A Work's deletion deletes only the member copy it read and judged the
// Work's. One the member's owner takes over between that read and the
// delete (the hub's label removed) is another object now, and stays.
func TestWorkDeletionLeavesACopyTakenOverAfterItWasRead(t *testing.T) {
	ctx := context.Background()
	w := workFixture(t, false, nil)
	d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
	d.reconcile(t, w)
	if err := d.hub.Delete(ctx, d.work(t, w)); err != nil {
		t.Fatal(err)
	}
	takeOver := func() {
		dep, err := d.memberDeployment()
		if err != nil {
			t.Fatal(err)
		}
		delete(dep.Labels, "karmada.io/managed")
		if err := d.member.Update(ctx, dep); err != nil {
			t.Fatal(err)
		}
	}
	mc := d.r.Members.clients[testCluster]
	mc.client = interceptor.NewClient(d.member.(client.WithWatch), interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if takeOver != nil {
				takeOver()
				takeOver = nil
			}
			return c.Delete(ctx, obj, opts...)
		}})
	d.r.Members.clients[testCluster] = mc

	if _, err := d.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if _, err := d.memberDeployment(); err != nil {
		t.Fatalf("the copy taken over after the dispatcher read it is deleted: %v", err)
	}
	if err := d.hub.Get(ctx, client.ObjectKeyFromObject(w), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Work is not released: %v", err)
	}
}
