package hold

import (
	"fmt"
	"strings"
	"testing"
)

func TestRecordSaysWhichClustersAreHeldByWhat(t *testing.T) {
	gate := Hold{Reason: "GateClosed", Message: "waiting approval, gate 'shop/ok' is closed"}
	stage := Hold{Reason: "RolloutStage", Message: "held by Rollout shop/web: stage 'rest' waits"}
	for _, tc := range []struct {
		name        string
		decisions   map[string]Decision
		held        bool
		reason, msg string
	}{
		{"nothing holds", map[string]Decision{"a": {}, "b": {}}, false, "", ""},
		{"no clusters", nil, false, "", ""},
		{"one cluster", map[string]Decision{"a": {}, "b": {Holds: []Hold{gate}}}, true, "GateClosed",
			"b: waiting approval, gate 'shop/ok' is closed"},
		{"clusters sharing a hold are named together, in name order", map[string]Decision{
			"c": {Holds: []Hold{stage}}, "a": {Holds: []Hold{gate}}, "b": {Holds: []Hold{stage}}, "d": {Holds: []Hold{gate}}},
			true, "GateClosed",
			"a, d: waiting approval, gate 'shop/ok' is closed; b, c: held by Rollout shop/web: stage 'rest' waits"},
		{"two holds on one cluster: both messages, the first's reason", map[string]Decision{"a": {Holds: []Hold{stage, gate}}},
			true, "RolloutStage", "a: held by Rollout shop/web: stage 'rest' waits; waiting approval, gate 'shop/ok' is closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held, reason, msg := Record(tc.decisions)
			if held != tc.held || reason != tc.reason || msg != tc.msg {
				t.Errorf("Record = %v, %q, %q; want %v, %q, %q", held, reason, msg, tc.held, tc.reason, tc.msg)
			}
		})
	}
}

func TestRecordStaysSmallOnAnyFleet(t *testing.T) {
	decisions := map[string]Decision{}
	for i := range 1000 {
		decisions[fmt.Sprintf("member%04d", i)] = Decision{Holds: []Hold{{Reason: "Frozen", Message: fmt.Sprintf("frozen for cluster %d", i)}}}
	}
	_, _, msg := Record(decisions)
	if len(msg) > maxRecordMessage+64 {
		t.Fatalf("message of %d bytes", len(msg))
	}
	if !strings.HasPrefix(msg, "member0000: frozen for cluster 0; ") || !strings.Contains(msg, " more held clusters") {
		t.Fatalf("message %q", msg)
	}
	var shown int
	for i := range 1000 {
		if strings.Contains(msg, fmt.Sprintf("member%04d:", i)) {
			shown++
		}
	}
	if want := fmt.Sprintf("; and %d more held clusters", 1000-shown); !strings.HasSuffix(msg, want) {
		t.Fatalf("message ends %q, want %q", msg[len(msg)-40:], want)
	}
}
