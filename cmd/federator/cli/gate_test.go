package cli

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
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
		{"close keeps a past open request (the newer close wins)", map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-03-01T11:00:00Z"},
			[]string{"gate", "close", "approval"},
			map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-03-01T11:00:00Z", gatingv1alpha1.CloseRequestAnnotation: nowStamp},
			"close requested at"},
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
