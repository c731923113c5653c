package dashboard

import (
	"testing"

	"github.com/federator-dev/federator/pkg/copystate"
)

// A copy that waits says what its member still runs beside what it waits
// for, and "wants" only of a version the member does not run yet.
func TestVersionText(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    cell
		want string
	}{
		{"applied", cell{State: copystate.Applied, Version: "nginx:1.25"}, "nginx:1.25"},
		{"held, the member runs what the Work carries", cell{State: copystate.Held, Version: "nginx:1.25", Running: "nginx:1.25"}, "nginx:1.25"},
		{"held, a change waiting", cell{State: copystate.Held, Version: "nginx:1.26", Running: "nginx:1.25", Wants: "nginx:1.26"},
			"runs nginx:1.25, wants nginx:1.26"},
		{"held, what the member runs not known", cell{State: copystate.Held, Version: "nginx:1.26", Wants: "nginx:1.26"}, "wants nginx:1.26"},
		{"pending", cell{State: copystate.Pending, Version: "nginx:1.26", Running: "nginx:1.25", Wants: "nginx:1.26"},
			"runs nginx:1.25, wants nginx:1.26"},
		{"failed", cell{State: copystate.Failed, Version: "nginx:1.26", Running: "nginx:1.25", Wants: "nginx:1.26"},
			"runs nginx:1.25, wants nginx:1.26"},
		{"not a workload", cell{State: copystate.Pending, Version: "binding gen 7", Running: "binding gen 6", Wants: "binding gen 7"},
			"runs binding gen 6, wants binding gen 7"},
		{"a Rollout found it not healthy: the member runs it", cell{State: copystate.Failed, Version: "nginx:1.27-broken"}, "nginx:1.27-broken"},
		{"progressing", cell{State: StateProgressing, Version: "nginx:1.26", Running: "nginx:1.25", Wants: "nginx:1.26"}, "nginx:1.26"},
		{"no version", cell{State: copystate.Held}, ""},
	} {
		if got := tc.c.VersionText(); got != tc.want {
			t.Errorf("%s: VersionText() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
