package binding

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"

	// Only this test imports the gate controller: to check that the
	// binding controller's verdict is the one the gate controller would
	// write at the same instant.
	"github.com/federator-dev/federator/pkg/gate"
)

func stamp(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// gateAsWritten is Gate ops-approval in namespace shop as the gate
// controller left it after evaluating it at evaluatedAt: the status it
// wrote then, which may be stale by now.
func gateAsWritten(t *testing.T, spec gatingv1alpha1.GateSpec, annotations map[string]string, evaluatedAt string) *gatingv1alpha1.Gate {
	t.Helper()
	g := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "approval", Annotations: annotations}, Spec: spec}
	return gateControllerAt(t, g, evaluatedAt)
}

// gateControllerAt runs the gate controller once at instant on a copy of g
// and returns the Gate as it wrote it.
func gateControllerAt(t *testing.T, g *gatingv1alpha1.Gate, instant string) *gatingv1alpha1.Gate {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(g.DeepCopy()).
		WithStatusSubresource(&gatingv1alpha1.Gate{}).Build()
	r := &gate.Reconciler{Client: c, Recorder: record.NewFakeRecorder(10), Clock: clocktesting.NewFakePassiveClock(stamp(instant))}
	key := client.ObjectKeyFromObject(g)
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	out := &gatingv1alpha1.Gate{}
	if err := c.Get(context.Background(), key, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The binding controller judges a gate by the clock, not by the status the
// gate controller last wrote: what it decides at an instant is what the
// gate controller would write at that instant, whether that controller is
// running, late, or off; a gate the template lists as one the policy does.
func TestGatesJudgedByTheClock(t *testing.T) {
	daily := func(action string) []gatingv1alpha1.GateSchedule {
		return []gatingv1alpha1.GateSchedule{{Name: "daily", Cron: "0 11 * * *",
			Duration: metav1.Duration{Duration: 2 * time.Hour}, Action: action}}
	}
	cases := []struct {
		name        string
		spec        gatingv1alpha1.GateSpec
		annotations map[string]string
		// evaluatedAt is when the gate controller last wrote the status;
		// now is when the binding is reconciled, the gate controller off
		// since.
		evaluatedAt, now string
		wantHeld         bool
		wantMessage      string // part of the hold message
		// wantRecheck is how long until the binding is looked at again
		// (0: not for the gates' sake).
		wantRecheck time.Duration
	}{
		{name: "an open request past its window holds, though the status still says open",
			spec:        gatingv1alpha1.GateSpec{Default: "closed", Window: &metav1.Duration{Duration: time.Hour}},
			annotations: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T10:00:00Z"},
			evaluatedAt: "2026-11-23T10:00:00Z", now: "2026-11-23T11:30:00Z",
			wantHeld: true, wantMessage: "Gate closed by default"},
		{name: "gate open --for 1h holds once its close request comes into force, though the status still says open",
			spec: gatingv1alpha1.GateSpec{Default: "closed"},
			annotations: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T10:00:00Z",
				gatingv1alpha1.CloseRequestAnnotation: "2026-11-23T11:00:00Z"},
			evaluatedAt: "2026-11-23T10:00:00Z", now: "2026-11-23T11:00:00Z",
			wantHeld: true, wantMessage: "Gate close requested"},
		{name: "a closing window that began while the gate controller was off holds, and the binding is looked at again when it ends",
			spec:        gatingv1alpha1.GateSpec{Default: "opened", Schedules: daily("close")},
			evaluatedAt: "2026-11-23T10:00:00Z", now: "2026-11-23T11:00:00Z",
			wantHeld: true, wantMessage: "Closed by schedule 'daily' until 2026-11-23T13:00:00Z", wantRecheck: 2 * time.Hour},
		{name: "a restart in the middle of a closing window: still held, looked at again when it ends",
			spec:        gatingv1alpha1.GateSpec{Default: "opened", Schedules: daily("close")},
			evaluatedAt: "2026-11-23T11:00:00Z", now: "2026-11-23T12:15:00Z",
			wantHeld: true, wantMessage: "Closed by schedule 'daily' until 2026-11-23T13:00:00Z", wantRecheck: 45 * time.Minute},
		{name: "a restart after an opening window ended during the outage holds",
			spec:        gatingv1alpha1.GateSpec{Default: "closed", Schedules: daily("open")},
			evaluatedAt: "2026-11-23T11:00:00Z", now: "2026-11-23T13:30:00Z",
			wantHeld: true, wantMessage: "Gate closed by default", wantRecheck: 21*time.Hour + 30*time.Minute},
		{name: "an open request within its window releases, and the binding is looked at again when it ends",
			spec:        gatingv1alpha1.GateSpec{Default: "closed", Window: &metav1.Duration{Duration: time.Hour}},
			annotations: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T10:00:00Z"},
			evaluatedAt: "2026-11-23T10:00:00Z", now: "2026-11-23T10:20:00Z",
			wantRecheck: 40 * time.Minute},
		{name: "an open request the gate controller has not seen yet releases",
			spec:        gatingv1alpha1.GateSpec{Default: "closed"},
			annotations: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T10:05:00Z"},
			evaluatedAt: "2026-11-23T10:00:00Z", now: "2026-11-23T10:06:00Z"},
		{name: "a gate closed by default without requests or schedules holds and needs no recheck",
			spec:        gatingv1alpha1.GateSpec{Default: "closed"},
			evaluatedAt: "2026-11-23T10:00:00Z", now: "2026-11-23T10:06:00Z",
			wantHeld: true, wantMessage: "Gate closed by default"},
	}
	listers := map[string]client.Object{
		"the policy":   &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
		"the template": &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
	}
	for lister, obj := range listers {
		for _, tc := range cases {
			t.Run(lister+": "+tc.name, func(t *testing.T) {
				written := gateAsWritten(t, tc.spec, tc.annotations, tc.evaluatedAt)
				// The gate controller's verdict, had it run at now.
				wouldWrite := meta.FindStatusCondition(gateControllerAt(t, written, tc.now).Status.Conditions, gatingv1alpha1.ConditionOpened)
				if wouldWrite == nil || (wouldWrite.Status == metav1.ConditionFalse) != tc.wantHeld {
					t.Fatalf("case is wrong: the gate controller at %s writes Opened %v, want held=%v", tc.now, wouldWrite, tc.wantHeld)
				}

				b := newBindingTest(t, nil, interceptor.Funcs{})
				written.ResourceVersion = ""
				if err := b.hub.Create(context.Background(), written); err != nil {
					t.Fatal(err)
				}
				if err := b.hub.Patch(context.Background(), obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType,
					[]byte(`{"metadata":{"annotations":{"gating.federator.dev/gates":"approval"}}}`))); err != nil {
					t.Fatal(err)
				}
				b.works.Clock = clocktesting.NewFakePassiveClock(stamp(tc.now))
				res, err := b.works.Reconcile(context.Background(), ctrl.Request{NamespacedName: bindingKey})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range []string{"member1", "member2"} {
					w := b.work(t, c)
					msg := w.Annotations["work.federator.dev/hold-message"]
					if held(w) != tc.wantHeld {
						t.Errorf("%s: held = %v (%q), want %v", c, held(w), msg, tc.wantHeld)
					}
					if tc.wantHeld && (!strings.Contains(msg, tc.wantMessage) || !strings.Contains(msg, wouldWrite.Message)) {
						t.Errorf("%s: hold message %q, want it to say %q as the gate controller would (%q)", c, msg, tc.wantMessage, wouldWrite.Message)
					}
					// Metrics count the Works a gate holds from this list, not
					// from the message.
					if gates, want := w.Annotations["work.federator.dev/hold-gates"], map[bool]string{true: "shop/approval"}[tc.wantHeld]; gates != want {
						t.Errorf("%s: annotation work.federator.dev/hold-gates = %q, want %q", c, gates, want)
					}
				}
				if res.RequeueAfter != tc.wantRecheck {
					t.Errorf("looked at again after %s, want %s", res.RequeueAfter, tc.wantRecheck)
				}
			})
		}
	}
}

// A Gate's event brings the bindings whose template lists it, though no
// policy or Cluster does: the template's annotations are on no object the
// Gate watch lists, so each pass records what its template lists. A
// template that lists the gate no more, or a binding gone, is not brought.
func TestAGateBringsTheBindingsWhoseTemplateListsIt(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.works.waiters = &gateWaiters{}
	approval := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "approval"},
		Spec: gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Closed}}
	other := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "approval"}}
	if err := b.hub.Create(ctx, approval); err != nil {
		t.Fatal(err)
	}
	waiting := func(g *gatingv1alpha1.Gate) []reconcile.Request {
		return bindingsWaitingFor(b.hub, false, b.works.waiters)(ctx, g)
	}
	listGates := func(value string) {
		t.Helper()
		v := "null"
		if value != "" {
			v = `"` + value + `"`
		}
		if err := b.hub.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
			client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"gating.federator.dev/gates":`+v+`}}}`))); err != nil {
			t.Fatal(err)
		}
		b.reconcile(t)
	}

	listGates("approval")
	if w := b.work(t, "member1"); !held(w) || !strings.Contains(w.Annotations["work.federator.dev/hold-message"],
		"gate 'shop/approval' is closed (Gate closed by default; listed by Deployment shop/web)") {
		t.Fatalf("member1 held %t, message %q; want held by the template's gate", held(w), w.Annotations["work.federator.dev/hold-message"])
	}
	if got, want := waiting(approval), []reconcile.Request{{NamespacedName: bindingKey}}; !slices.Equal(got, want) {
		t.Errorf("Gate shop/approval brings %v, want %v", got, want)
	}
	if got := waiting(other); len(got) != 0 {
		t.Errorf("Gate ops/approval, which nothing lists, brings %v", got)
	}

	listGates("")
	if w := b.work(t, "member1"); held(w) {
		t.Errorf("member1 still held once the template lists no gate: %q", w.Annotations["work.federator.dev/hold-message"])
	}
	if got := waiting(approval); len(got) != 0 {
		t.Errorf("Gate shop/approval brings %v after the template stopped listing it", got)
	}

	listGates("ops/approval")
	if got := waiting(other); len(got) != 1 {
		t.Errorf("Gate ops/approval, listed as namespace/name, brings %v, want the binding", got)
	}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: bindingKey.Namespace, Name: bindingKey.Name}}
	if err := b.hub.Patch(ctx, rb, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
		t.Fatal(err)
	}
	if err := b.hub.Delete(ctx, rb); err != nil {
		t.Fatal(err)
	}
	b.reconcile(t)
	if got := waiting(other); len(got) != 0 {
		t.Errorf("a binding gone is still brought: %v", got)
	}
}
