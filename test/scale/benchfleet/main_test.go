package main

import (
	"bytes"
	"strings"
	"testing"
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
