package localfleet

import (
	"bytes"
	"encoding/json"
	"testing"
)

// federator.log is JSON lines; --v=1 adds a line per reconcile outcome.
func TestLogFollowsVerbosity(t *testing.T) {
	for _, verbosity := range []int{0, 1} {
		var out bytes.Buffer
		newLogger(&out, verbosity).V(1).Info("reconciled")
		if logged := out.Len() > 0; logged != (verbosity == 1) {
			t.Errorf("--v=%d: a V(1) line logged: %v, want %v", verbosity, logged, verbosity == 1)
		}
		out.Reset()
		newLogger(&out, verbosity).Info("started")
		var line map[string]any
		if err := json.Unmarshal(out.Bytes(), &line); err != nil || line["msg"] != "started" {
			t.Errorf("--v=%d: logged %q, want a JSON line with msg started (%v)", verbosity, out.String(), err)
		}
	}
}
