package cli

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/pkg/gatestate"
)

func gate(name string, annotations map[string]string) *gatingv1alpha1.Gate {
	return &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, Annotations: annotations,
		CreationTimestamp: created(24 * time.Hour)}, Spec: gatingv1alpha1.GateSpec{Default: "closed"}}
}

func gateAnnotations(t *testing.T, h *hub, name string) map[string]string {
	t.Helper()
	g := &gatingv1alpha1.Gate{}
	if err := h.client.Get(t.Context(), client.ObjectKey{Namespace: "demo", Name: name}, g); err != nil {
		t.Fatal(err)
	}
	return g.Annotations
}

func TestGateOpenClose(t *testing.T) {
	const nowStamp = "2026-03-01T12:00:00Z"
	cases := []struct {
		name    string
		before  map[string]string
		args    []string
		want    map[string]string // annotations after
		wantOut string
	}{
		{"open writes the open request now", nil, []string{"gate", "open", "approval"},
			map[string]string{gatingv1alpha1.OpenRequestAnnotation: nowStamp},
			"Gate demo/approval: open requested at 2026-03-01T12:00:00Z; `federator get gates` shows"},
		{"open --for writes the close request that long after", nil, []string{"gate", "open", "approval", "--for", "1h"},
			map[string]string{gatingv1alpha1.OpenRequestAnnotation: nowStamp, gatingv1alpha1.CloseRequestAnnotation: "2026-03-01T13:00:00Z"},
			"it closes again at 2026-03-01T13:00:00Z (--for 1h0m0s)"},
		{"close cancels a pending reopen", map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-03-01T12:30:00Z"},
			[]string{"gate", "close", "approval"},
			map[string]string{gatingv1alpha1.CloseRequestAnnotation: nowStamp},
			"the pending request to flip it back at 2026-03-01T12:30:00Z is cancelled"},
		{"close replaces a past open request: the request in force is the one stored last", map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-03-01T11:00:00Z"},
			[]string{"gate", "close", "approval"},
			map[string]string{gatingv1alpha1.CloseRequestAnnotation: nowStamp},
			"close requested at"},
		{"open replaces a close stamped later (by a clock ahead of the hub's)", map[string]string{gatingv1alpha1.CloseRequestAnnotation: "2026-03-01T12:00:30Z"},
			[]string{"gate", "open", "approval"},
			map[string]string{gatingv1alpha1.OpenRequestAnnotation: nowStamp},
			"open requested at"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHub(t, gate("approval", tc.before))
			stdout, _, err := run(t, h, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stdout, tc.wantOut) {
				t.Errorf("stdout %q lacks %q", stdout, tc.wantOut)
			}
			got := gateAnnotations(t, h, "approval")
			if len(got) != len(tc.want) {
				t.Errorf("annotations = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// The hub orders and times requests, never the clock of the machine the
// CLI runs on: testNow is the hub's clock, and the CLI's is off by skew.
func TestGateRequestsTakeTheHubsClock(t *testing.T) {
	ahead, behind := 5*time.Minute, -5*time.Minute
	for _, tc := range []struct {
		name   string
		skew   time.Duration
		before map[string]string
		// applied is the request in before that the gate controller has
		// applied (its status), "" for none.
		applied string
		args    []string
		// The gate's state at these hub times after the command.
		openAt, closedAt []time.Time
	}{
		{name: "a CLI 5 minutes fast: close after an open closes at once", skew: ahead,
			before: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-03-01T11:00:00Z"},
			args:   []string{"gate", "close", "approval"}, closedAt: []time.Time{testNow, testNow.Add(time.Minute)}},
		{name: "a CLI 5 minutes slow: close after an open the hub stamped and applied just before closes, for good", skew: behind,
			before: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-03-01T11:59:50.25Z"}, applied: gatingv1alpha1.OpenRequestAnnotation,
			args: []string{"gate", "close", "approval"}, closedAt: []time.Time{testNow, testNow.Add(24 * time.Hour)}},
		{name: "a CLI 5 minutes slow: open after a close the hub stamped and applied just before opens", skew: behind,
			before: map[string]string{gatingv1alpha1.CloseRequestAnnotation: "2026-03-01T11:59:50Z"}, applied: gatingv1alpha1.CloseRequestAnnotation,
			args: []string{"gate", "open", "approval"}, openAt: []time.Time{testNow, testNow.Add(24 * time.Hour)}},
		{name: "a CLI 5 minutes fast: open --for 1h ends 1h after the hub's time", skew: ahead,
			args:   []string{"gate", "open", "approval", "--for", "1h"},
			openAt: []time.Time{testNow, testNow.Add(time.Hour - time.Second)}, closedAt: []time.Time{testNow.Add(time.Hour)}},
		{name: "a CLI 5 minutes slow: open --for 1h ends 1h after the hub's time", skew: behind,
			args:   []string{"gate", "open", "approval", "--for", "1h"},
			openAt: []time.Time{testNow, testNow.Add(time.Hour - time.Second)}, closedAt: []time.Time{testNow.Add(time.Hour)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gate("approval", tc.before)
			if tc.applied != "" {
				// As the gate controller records the request in force.
				requested, err := gatestate.RequestTime(tc.applied, tc.before[tc.applied])
				if err != nil {
					t.Fatal(err)
				}
				g.Status.RequestedAt = &metav1.Time{Time: requested}
				opened := metav1.Condition{Type: gatingv1alpha1.ConditionOpened, Status: metav1.ConditionFalse, Reason: gatingv1alpha1.ReasonCloseRequested}
				if tc.applied == gatingv1alpha1.OpenRequestAnnotation {
					opened.Status, opened.Reason = metav1.ConditionTrue, gatingv1alpha1.ReasonOpenRequested
				}
				g.Status.Conditions = []metav1.Condition{opened}
			}
			h := newTestHub(t, g)
			h.now = func() time.Time { return testNow.Add(tc.skew) }
			if _, _, err := run(t, h, tc.args...); err != nil {
				t.Fatal(err)
			}
			g = &gatingv1alpha1.Gate{}
			if err := h.client.Get(t.Context(), client.ObjectKey{Namespace: "demo", Name: "approval"}, g); err != nil {
				t.Fatal(err)
			}
			for want, times := range map[bool][]time.Time{true: tc.openAt, false: tc.closedAt} {
				for _, at := range times {
					if e := gatestate.At(g, at); e.Open != want {
						t.Errorf("at hub time %s the gate is open=%v (%s), want open=%v; annotations %v",
							at.Format(time.RFC3339), e.Open, e.Message, want, g.Annotations)
					}
				}
			}
		})
	}
}

// A write that loses a race with another (the Gate's resourceVersion
// changed since it was read) is made again on the Gate as it is now.
func TestGateRequestRetriesAConflict(t *testing.T) {
	h := newTestHub(t, gate("approval", map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-03-01T11:00:00Z"}))
	conflicts := 0
	h.client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if conflicts == 0 {
				conflicts++
				return apierrors.NewConflict(schema.GroupResource{Group: "gating.federator.dev", Resource: "gates"}, obj.GetName(),
					errors.New("the object has been modified; please apply your changes to the latest version and try again"))
			}
			return c.Patch(ctx, obj, patch, opts...)
		}})
	if _, _, err := run(t, h, "gate", "close", "approval"); err != nil {
		t.Fatalf("a conflict was not retried: %v", err)
	}
	got := gateAnnotations(t, h, "approval")
	if want := map[string]string{gatingv1alpha1.CloseRequestAnnotation: "2026-03-01T12:00:00Z"}; !maps.Equal(got, want) {
		t.Errorf("annotations = %v, want %v", got, want)
	}
}

func TestGateErrors(t *testing.T) {
	h := newTestHub(t, gate("approval", nil))
	if _, _, err := run(t, h, "gate", "open", "aproval"); err == nil || !strings.Contains(err.Error(), "aproval") {
		t.Errorf("unknown gate: err = %v, want one naming it", err)
	}
	if _, _, err := run(t, h, "gate", "open", "approval", "--for", "-5m"); err == nil || !strings.Contains(err.Error(), "--for") {
		t.Errorf("negative --for: err = %v", err)
	}
	if got := gateAnnotations(t, h, "approval"); len(got) != 0 {
		t.Errorf("bad input changed the gate: %v", got)
	}
}

func TestGetGatesGolden(t *testing.T) {
	newHub := func(t *testing.T) *hub {
		approval := gate("approval", nil)
		approval.Status.Conditions = []metav1.Condition{{Type: "Opened", Status: metav1.ConditionFalse, Reason: "Default",
			Message: "Gate closed by default"}}
		friday := gate("no-deploy-friday", nil)
		friday.Spec = gatingv1alpha1.GateSpec{Default: "opened", Schedules: []gatingv1alpha1.GateSchedule{{Name: "no-deploy-friday",
			Cron: "0 0 * * FRI", TimeZone: "Europe/Berlin", Duration: metav1.Duration{Duration: 72 * time.Hour}, Action: "close"}}}
		until := metav1.NewTime(time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC))
		friday.Status.ResetToDefaultAt = &until
		friday.Status.Conditions = []metav1.Condition{{Type: "Opened", Status: metav1.ConditionFalse, Reason: "Scheduled",
			Message: "Closed by schedule 'no-deploy-friday' until 2026-03-01T23:00:00Z"}}
		web := propagationPolicy("web", map[string]string{gatingv1alpha1.GatesAnnotation: "approval, ops/other"}, nil)
		member3 := cluster("member3")
		member3.Annotations = map[string]string{gatingv1alpha1.GatesAnnotation: "demo/no-deploy-friday"}
		return newTestHub(t, approval, friday, web, member3)
	}
	runGolden(t, newHub, []goldenCase{
		{"gates.golden", []string{"get", "gates", "-n", "demo"}},
		{"gates-wide.golden", []string{"get", "gates", "-n", "demo", "-o", "wide"}},
	})
}
