package softdelete

import (
	"context"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/fixture"
	"github.com/federator-dev/federator/pkg/metrics"
)

type staticMembers map[string]client.Client

func (m staticMembers) Client(_ context.Context, cluster string) (client.Client, error) {
	return m[cluster], nil
}

var started = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

type countdownTest struct {
	hub, member client.Client
	clock       *clocktesting.FakeClock
	recorder    *record.FakeRecorder
	tombstone   countdown.Tombstone
}

// newCountdownTest is a countdown as the dispatcher leaves it: the member
// Deployment demo/web marked since started, its tombstone on the hub, and
// the binding to tell.
func newCountdownTest(t *testing.T, delay string, edit func(*countdown.Tombstone)) *countdownTest {
	t.Helper()
	scheme := policy.NewScheme()
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web", UID: "u-1",
		Annotations: map[string]string{"federator.dev/deletion-timestamp": started.Format(time.RFC3339)}}}
	tomb := countdown.Tombstone{Cluster: "member3", APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web",
		UID: "u-1", StartedAt: started, Delay: delay, Binding: countdown.Ref{Kind: "ResourceBinding", Namespace: "demo", Name: "web-deployment"}}
	if edit != nil {
		edit(&tomb)
	}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tomb.ConfigMap(),
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3"}},
		&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-deployment"}}).Build()
	member := fake.NewClientBuilder().WithScheme(scheme).WithObjects(dep).Build()
	return &countdownTest{hub: hub, member: member, clock: clocktesting.NewFakeClock(started),
		recorder: record.NewFakeRecorder(10), tombstone: tomb}
}

// reconcile runs a reconciler built afresh, as after a restart: it knows
// only what is stored.
func (c *countdownTest) reconcile(t *testing.T) ctrl.Result {
	t.Helper()
	r := &Reconciler{Hub: c.hub, Tombstones: c.hub, Members: staticMembers{"member3": c.member}, Recorder: c.recorder,
		Clock: c.clock, MaxDelay: countdown.DefaultMaxDelay}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c.tombstone.ConfigMap())})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return res
}

func (c *countdownTest) memberHasIt() bool {
	err := c.member.Get(context.Background(), client.ObjectKey{Namespace: "demo", Name: "web"}, &appsv1.Deployment{})
	return !apierrors.IsNotFound(err)
}

func (c *countdownTest) tombstoneLeft() bool {
	err := c.hub.Get(context.Background(), client.ObjectKeyFromObject(c.tombstone.ConfigMap()), &corev1.ConfigMap{})
	return !apierrors.IsNotFound(err)
}

func TestCountdown(t *testing.T) {
	t.Run("comes back exactly when the delay ends, not before, and deletes then", func(t *testing.T) {
		c := newCountdownTest(t, "10m", nil)
		if res := c.reconcile(t); res.RequeueAfter != 10*time.Minute {
			t.Errorf("RequeueAfter = %s, want the whole delay", res.RequeueAfter)
		}
		c.clock.Step(10*time.Minute - time.Second)
		if res := c.reconcile(t); res.RequeueAfter != time.Second || !c.memberHasIt() {
			t.Errorf("a second before the end: RequeueAfter = %s, member has it: %v", res.RequeueAfter, c.memberHasIt())
		}
		before := testutil.ToFloat64(metrics.SoftDeletionsCompleted.WithLabelValues("member3"))
		c.clock.Step(time.Second)
		if res := c.reconcile(t); res != (ctrl.Result{}) {
			t.Errorf("after deleting: %+v, want nothing more", res)
		}
		if c.memberHasIt() || c.tombstoneLeft() {
			t.Errorf("member has it: %v, tombstone left: %v; want neither", c.memberHasIt(), c.tombstoneLeft())
		}
		if got := testutil.ToFloat64(metrics.SoftDeletionsCompleted.WithLabelValues("member3")) - before; got != 1 {
			t.Errorf("completed counter rose by %v, want 1", got)
		}
		events := fixture.Events(c.recorder)
		want := "Normal SoftDeletionCompleted Deployment demo/web deleted from member3 at 2025-03-01T12:10:00Z (deletion delay 10m, countdown started 2025-03-01T12:00:00Z)"
		if len(events) != 1 || events[0] != want {
			t.Errorf("events = %q, want %q", events, want)
		}
	})

	t.Run("a restart in the middle waits only what is left", func(t *testing.T) {
		c := newCountdownTest(t, "10m", nil)
		c.reconcile(t)
		c.clock.Step(7 * time.Minute)
		if res := c.reconcile(t); res.RequeueAfter != 3*time.Minute {
			t.Errorf("RequeueAfter = %s, want 3m", res.RequeueAfter)
		}
	})

	t.Run("an object placed again (mark removed) is kept and its countdown cancelled", func(t *testing.T) {
		c := newCountdownTest(t, "10m", nil)
		dep := &appsv1.Deployment{}
		_ = c.member.Get(context.Background(), client.ObjectKey{Namespace: "demo", Name: "web"}, dep)
		dep.Annotations = nil
		if err := c.member.Update(context.Background(), dep); err != nil {
			t.Fatal(err)
		}
		c.clock.Step(time.Hour)
		c.reconcile(t)
		if !c.memberHasIt() || c.tombstoneLeft() {
			t.Errorf("member has it: %v, tombstone left: %v; want it kept and the tombstone gone", c.memberHasIt(), c.tombstoneLeft())
		}
		if events := fixture.Events(c.recorder); len(events) != 1 || !strings.HasPrefix(events[0], "Normal SoftDeletionCancelled Deployment demo/web in member3 is placed there again") {
			t.Errorf("events = %q", events)
		}
	})

	t.Run("a bad delay keeps the object and does not come back", func(t *testing.T) {
		c := newCountdownTest(t, "24 hours", nil)
		c.clock.Step(10000 * time.Hour)
		if res := c.reconcile(t); res != (ctrl.Result{}) || !c.memberHasIt() || !c.tombstoneLeft() {
			t.Errorf("result %+v, member has it: %v, tombstone left: %v", res, c.memberHasIt(), c.tombstoneLeft())
		}
	})

	t.Run("a delay above the maximum ends at the maximum", func(t *testing.T) {
		c := newCountdownTest(t, "1000h", nil)
		if res := c.reconcile(t); res.RequeueAfter != countdown.DefaultMaxDelay {
			t.Errorf("RequeueAfter = %s, want the maximum", res.RequeueAfter)
		}
	})

	t.Run("delete now deletes at once and says it was asked", func(t *testing.T) {
		c := newCountdownTest(t, "24h", func(tomb *countdown.Tombstone) { tomb.DeleteNow = started.Add(time.Minute) })
		c.clock.Step(time.Minute)
		c.reconcile(t)
		if c.memberHasIt() || c.tombstoneLeft() {
			t.Errorf("member has it: %v, tombstone left: %v", c.memberHasIt(), c.tombstoneLeft())
		}
		if events := fixture.Events(c.recorder); len(events) != 1 || !strings.Contains(events[0], "on request (federator delete --now)") {
			t.Errorf("events = %q", events)
		}
	})

	t.Run("an object deleted in the member directly ends the countdown", func(t *testing.T) {
		c := newCountdownTest(t, "10m", nil)
		_ = c.member.Delete(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web"}})
		c.reconcile(t)
		if c.tombstoneLeft() {
			t.Error("tombstone left")
		}
	})
}

// A countdown that comes due while the hub places its object on the
// cluster again (the template created again within the delay, its new
// binding listing the cluster) deletes nothing: the dispatcher takes the
// countdown back, and one that is late at it (its hub caches not watching
// after a hub restart, a new leader's first pass) must not cost the user
// the object they created again in time. Once the binding no longer
// places it there, the due deletion happens.
func TestADueCountdownWhoseObjectIsPlacedAgainDeletesNothing(t *testing.T) {
	c := newCountdownTest(t, "10m", nil)
	b := &workv1alpha2.ResourceBinding{}
	if err := c.hub.Get(context.Background(), client.ObjectKey{Namespace: "demo", Name: "web-deployment"}, b); err != nil {
		t.Fatal(err)
	}
	b.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web"}
	b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member3"}}
	if err := c.hub.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	c.clock.Step(10 * time.Minute)
	if res := c.reconcile(t); res.RequeueAfter <= 0 {
		t.Errorf("a due countdown whose object is placed again is not looked at again: %+v", res)
	}
	if !c.memberHasIt() || !c.tombstoneLeft() {
		t.Fatalf("member has it: %v, tombstone left: %v; want both while the binding places it on member3 again",
			c.memberHasIt(), c.tombstoneLeft())
	}
	if events := fixture.Events(c.recorder); len(events) != 0 {
		t.Errorf("events = %q, want none while waiting", events)
	}

	b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1"}}
	if err := c.hub.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	c.reconcile(t)
	if c.memberHasIt() {
		t.Error("the binding no longer places it on member3, and the due countdown did not delete it")
	}
}

// A countdown ended late, from a tombstone cache that has not caught up,
// leaves the tombstone of the countdown that followed it: the object was
// placed back (its first countdown taken back) and deleted again (a second
// countdown, recorded under the same name). The stale tombstone says the
// first countdown was taken back; forgetting it by name would drop the
// second one's record, and the object, marked, would never be deleted.
func TestAStaleTombstoneDoesNotEndTheCountdownThatFollowedIt(t *testing.T) {
	ctx := context.Background()
	c := newCountdownTest(t, "10m", nil)
	// The cache as it was during the first countdown.
	first := &corev1.ConfigMap{}
	if err := c.hub.Get(ctx, client.ObjectKeyFromObject(c.tombstone.ConfigMap()), first); err != nil {
		t.Fatal(err)
	}
	stale := fake.NewClientBuilder().WithObjects(first.DeepCopy()).Build()

	// Placed back and deleted again: the member copy marked anew, its new
	// countdown recorded on the hub.
	restarted := started.Add(3 * time.Minute)
	dep := &appsv1.Deployment{}
	if err := c.member.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Annotations["federator.dev/deletion-timestamp"] = restarted.Format(time.RFC3339)
	if err := c.member.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	second := c.tombstone
	second.StartedAt = restarted
	if _, created, err := countdown.Record(ctx, c.hub, c.hub, second); err != nil || !created {
		t.Fatalf("record the second countdown: created %v, %v", created, err)
	}

	c.clock.Step(time.Minute)
	r := &Reconciler{Hub: c.hub, Tombstones: stale, Members: staticMembers{"member3": c.member}, Recorder: c.recorder,
		Clock: c.clock, MaxDelay: countdown.DefaultMaxDelay}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(first)}); err != nil {
		t.Fatalf("reconcile the stale tombstone: %v", err)
	}
	if !c.tombstoneLeft() {
		t.Fatal("the first countdown's end, read from a stale cache, deleted the second countdown's tombstone: " +
			"the object keeps its mark and is never deleted")
	}

	// Once the cache catches up, the second countdown runs to its end.
	c.clock.Step(12 * time.Minute)
	c.reconcile(t)
	if c.memberHasIt() || c.tombstoneLeft() {
		t.Errorf("after the second countdown's delay: member has it: %v, tombstone left: %v; want neither",
			c.memberHasIt(), c.tombstoneLeft())
	}
}

// frozenWrite is a member write refused before it was sent, as
// pkg/dispatch's FreezeGuard refuses it while a Freeze holds the member.
type frozenWrite struct{}

func (frozenWrite) Error() string             { return "Freeze incident-42 holds every write to member3" }
func (frozenWrite) RetryAfter() time.Duration { return 2 * time.Second }

// A countdown that ends while a freeze holds the member is delayed, not
// taken back: the object and its tombstone stay, and it comes back when
// the write may go.
func TestAFreezeDelaysADueCountdown(t *testing.T) {
	c := newCountdownTest(t, "10m", nil)
	frozen := interceptor.NewClient(c.member.(client.WithWatch), interceptor.Funcs{
		Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error {
			return frozenWrite{}
		},
	})
	c.clock.Step(10 * time.Minute)
	r := &Reconciler{Hub: c.hub, Tombstones: c.hub, Members: staticMembers{"member3": frozen}, Recorder: c.recorder,
		Clock: c.clock, MaxDelay: countdown.DefaultMaxDelay}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c.tombstone.ConfigMap())})
	if err != nil || res.RequeueAfter != 2*time.Second {
		t.Errorf("frozen: %+v, %v; want to come back in 2s, no error", res, err)
	}
	if !c.memberHasIt() || !c.tombstoneLeft() {
		t.Errorf("frozen: member has it %v, tombstone left %v; want both", c.memberHasIt(), c.tombstoneLeft())
	}
	if events := fixture.Events(c.recorder); len(events) != 0 {
		t.Errorf("events while frozen: %q", events)
	}
	c.reconcile(t)
	if c.memberHasIt() || c.tombstoneLeft() {
		t.Errorf("unfrozen: member has it %v, tombstone left %v; want neither", c.memberHasIt(), c.tombstoneLeft())
	}
}
