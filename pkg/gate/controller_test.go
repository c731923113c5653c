package gate

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fixture"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

type gateTest struct {
	r        *Reconciler
	c        client.Client
	clock    *clocktesting.FakePassiveClock
	recorder *record.FakeRecorder
}

func newGateTest(t *testing.T, g *gatingv1alpha1.Gate) *gateTest {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(g).
		WithStatusSubresource(&gatingv1alpha1.Gate{}).Build()
	clk := clocktesting.NewFakePassiveClock(at("2026-11-23T12:00:00Z"))
	rec := record.NewFakeRecorder(100)
	return &gateTest{r: &Reconciler{Client: c, Recorder: rec, Clock: clk}, c: c, clock: clk, recorder: rec}
}

func (g *gateTest) reconcile(t *testing.T) (ctrl.Result, *gatingv1alpha1.Gate) {
	t.Helper()
	key := client.ObjectKey{Namespace: "ops", Name: "approval"}
	res, err := g.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatal(err)
	}
	got := &gatingv1alpha1.Gate{}
	if err := g.c.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	return res, got
}

func opened(g *gatingv1alpha1.Gate) *metav1.Condition {
	return meta.FindStatusCondition(g.Status.Conditions, "Opened")
}

func TestGateReconciler(t *testing.T) {
	t.Run("an open request with a window opens the gate, says until when, and closes it exactly when the window ends", func(t *testing.T) {
		g := newGateTest(t, &gatingv1alpha1.Gate{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "approval",
				Annotations: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T11:59:30Z"}},
			Spec: gatingv1alpha1.GateSpec{Default: "closed", Window: &metav1.Duration{Duration: time.Minute},
				Interval: &metav1.Duration{Duration: time.Hour}}})
		res, got := g.reconcile(t)
		if c := opened(got); c == nil || c.Status != metav1.ConditionTrue || c.Message != "Gate scheduled for closing at 2026-11-23T12:00:30Z" {
			t.Errorf("Opened = %+v", c)
		}
		if got.Status.ResetToDefaultAt == nil || !got.Status.ResetToDefaultAt.Time.Equal(at("2026-11-23T12:00:30Z")) ||
			got.Status.RequestedAt == nil || !got.Status.RequestedAt.Time.Equal(at("2026-11-23T11:59:30Z")) {
			t.Errorf("status = %+v", got.Status)
		}
		if res.RequeueAfter != 30*time.Second {
			t.Errorf("requeue after %v, want 30s: the window's end, not the hour interval", res.RequeueAfter)
		}
		if events := fixture.Events(g.recorder); len(events) != 1 || events[0] != "Normal GateOpened Gate scheduled for closing at 2026-11-23T12:00:30Z" {
			t.Errorf("events = %q", events)
		}

		g.clock.SetTime(at("2026-11-23T12:00:30Z"))
		_, got = g.reconcile(t)
		g.reconcile(t)
		if c := opened(got); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "Default" {
			t.Errorf("after the window: Opened = %+v", c)
		}
		if got.Status.ResetToDefaultAt != nil || got.Status.RequestedAt != nil {
			t.Errorf("after the window: status = %+v", got.Status)
		}
		if events := fixture.Events(g.recorder); len(events) != 1 || events[0] != "Normal GateClosed Gate closed by default" {
			t.Errorf("events = %q, want one GateClosed", events)
		}
	})

	t.Run("a malformed request leaves the gate as it was, with a condition and one event naming the value", func(t *testing.T) {
		g := newGateTest(t, &gatingv1alpha1.Gate{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "approval",
				Annotations: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "tomorrow"}},
			Spec: gatingv1alpha1.GateSpec{Default: "closed"}})
		g.reconcile(t)
		_, got := g.reconcile(t)
		if c := opened(got); c == nil || c.Status != metav1.ConditionFalse {
			t.Errorf("Opened = %+v", c)
		}
		c := meta.FindStatusCondition(got.Status.Conditions, "RequestValid")
		want := `annotation open.gate.federator.dev/requestedAt: "tomorrow" is not an RFC 3339 time (e.g. 2026-11-23T10:00:00Z); the request is ignored`
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "InvalidRequest" || c.Message != want {
			t.Errorf("RequestValid = %+v", c)
		}
		events := fixture.Events(g.recorder)
		if len(events) != 2 || events[1] != "Warning InvalidRequest "+want {
			t.Errorf("events = %q, want GateClosed then one InvalidRequest", events)
		}
	})
}
