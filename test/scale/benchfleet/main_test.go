package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestARunFailsWhenAMemberObjectChangedWhileSuspended(t *testing.T) {
	for _, output := range []string{"table", "json"} {
		for _, tc := range []struct {
			changed int
			code    int
		}{{0, 0}, {1, 1}, {7, 1}} {
			r := &result{Members: 3, Resources: 500, ChangedHeld: tc.changed}
			var stdout, stderr bytes.Buffer
			code := report(r, output, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("-o %s, %d changed while suspended: exit %d, want %d", output, tc.changed, code, tc.code)
			}
			if stdout.Len() == 0 {
				t.Errorf("-o %s, %d changed while suspended: no figures printed", output, tc.changed)
			}
			msg := stderr.String()
			if tc.code == 0 && msg != "" {
				t.Errorf("-o %s, a run with nothing changed while suspended says %q", output, msg)
			}
			if tc.code != 0 && !strings.Contains(msg, "changed while suspended (must be 0)") {
				t.Errorf("-o %s, %d changed while suspended: stderr %q does not say what failed", output, tc.changed, msg)
			}
		}
	}
}

func TestARunFailsWhenAMemberObjectChangedAfterAFreeze(t *testing.T) {
	r := &result{Members: 3, Resources: 500, FleetFreezeTries: 20, ChangedFrozen: 2}
	var stdout, stderr bytes.Buffer
	if code := report(r, "table", &stdout, &stderr); code != 1 {
		t.Errorf("2 changed after a freeze: exit %d, want 1", code)
	}
	if msg := stderr.String(); !strings.Contains(msg, "2 member objects changed more than 2s after a freeze (must be 0)") {
		t.Errorf("stderr %q does not say what failed", msg)
	}
	if !strings.Contains(stdout.String(), "member objects changed after a freeze") {
		t.Errorf("the table has no row for changes after a freeze:\n%s", stdout.String())
	}
}

func TestTheLastChangeAfterAFreezeIsTimedFromTheFreeze(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var l changeLog
	for _, d := range []time.Duration{-time.Second, 0, 300 * time.Millisecond, 1200 * time.Millisecond, 2500 * time.Millisecond} {
		l.add(at.Add(d))
	}
	last, late := l.lastChange(at, 2*time.Second)
	if last != 2.5 || late != 1 {
		t.Errorf("lastChange = %.3fs, %d late; want 2.500s, 1 late", last, late)
	}
	if last, late := l.lastChange(at.Add(3*time.Second), 2*time.Second); last != 0 || late != 0 {
		t.Errorf("no change after the freeze: lastChange = %.3fs, %d late; want 0, 0", last, late)
	}
}

func TestARunThatLeftPhasesOutSaysSoAndPrintsNoFiguresForThem(t *testing.T) {
	o := options{templateFreezes: false, cycle: false}
	r := &result{Members: 10, Resources: 2000, Skipped: o.skipped(), FleetFreezeTries: 20}
	var stdout, stderr bytes.Buffer
	if code := report(r, "table", &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "phases left out: template-freezes, cycle") {
		t.Errorf("the header does not say which phases were left out:\n%s", out)
	}
	for _, row := range []string{"suspension on every binding and Work", "resume → new version", "member objects changed while suspended", "one template frozen under load"} {
		if strings.Contains(out, row) {
			t.Errorf("a phase left out still has its row %q (a 0 that was never measured):\n%s", row, out)
		}
	}
	if !strings.Contains(out, "fleet frozen under load → last member write, p99") {
		t.Errorf("the fleet-wide freeze's rows are missing:\n%s", out)
	}
	all := options{templateFreezes: true, cycle: true}
	if s := all.skipped(); len(s) != 0 {
		t.Errorf("a run of every phase says it left out %v", s)
	}
}
