package dashboard

import (
	"testing"

	"github.com/federator-dev/federator/internal/copystate"
)

// A held copy says "wants" only of a version the member does not run yet.
func TestVersionText(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    cell
		want string
	}{
		{"applied", cell{State: copystate.Applied, Version: "nginx:1.25"}, "nginx:1.25"},
		{"held, the member runs what the Work carries", cell{State: copystate.Held, Runs: true, Version: "nginx:1.25"}, "nginx:1.25"},
		{"held, a change waiting", cell{State: copystate.Held, Version: "nginx:1.26"}, "wants nginx:1.26"},
		{"pending", cell{State: copystate.Pending, Version: "nginx:1.26"}, "wants nginx:1.26"},
		{"no version", cell{State: copystate.Held}, ""},
	} {
		if got := tc.c.VersionText(); got != tc.want {
			t.Errorf("%s: VersionText() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
