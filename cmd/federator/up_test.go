package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/federator-dev/federator/pkg/fleet"
)

func sampleFleet(dir string, members ...string) *fleet.Fleet {
	f := &fleet.Fleet{Hub: &fleet.Cluster{Name: "hub", KubeconfigPath: filepath.Join(dir, "hub.kubeconfig")}}
	for _, m := range members {
		f.Members = append(f.Members, &fleet.Cluster{Name: m, KubeconfigPath: filepath.Join(dir, m+".kubeconfig")})
	}
	return f
}

// The staged-rollout help: one step per stage, in words that match the
// number of clusters, every command pasteable into a shell, and the PATH
// line only when a kubectl was built beside the fleet binaries.
func TestPrintReady(t *testing.T) {
	fleetDir := filepath.Join(t.TempDir(), "my fleet")
	binDir := t.TempDir()

	var out bytes.Buffer
	printReady(&out, sampleFleet(fleetDir, "member1", "member2", "member3"), binDir, true)
	text := out.String()
	for _, want := range []string{
		"federator: ready: hub and 3 members; kubeconfigs in " + fleetDir + " ",
		"1. Hold member2 and member3:",
		"2. Roll out nginx:1.27; only member1 changes:",
		"3. Release member2; member3 stays on nginx:1.25:",
		"4. Release everyone:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "export PATH") {
		t.Errorf("a PATH line without a kubectl in %s:\n%s", binDir, text)
	}

	if err := os.WriteFile(filepath.Join(binDir, "kubectl"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	printReady(&out, sampleFleet(fleetDir, "member1", "member2", "member3", "member4"), binDir, true)
	text = out.String()
	for _, want := range []string{
		"\n  export PATH=" + binDir + `:"$PATH"` + "\n",
		"3. Release member2; member3 and member4 stay on nginx:1.25:",
		// The fleet directory has a space: printed paths are quoted.
		"kubectl --kubeconfig '" + filepath.Join(fleetDir, "hub.kubeconfig") + "' -n demo set image",
		"kubectl --kubeconfig '" + fleetDir + "'/$m.kubeconfig -n demo get deploy web",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue
		}
		if syntax, err := exec.Command("bash", "-n", "-c", line).CombinedOutput(); err != nil {
			t.Errorf("printed command %q is not valid shell: %s", line, syntax)
		}
	}

	out.Reset()
	printReady(&out, sampleFleet(fleetDir, "member1"), binDir, false)
	if got := strings.Count(out.String(), "\n"); got != 1 {
		t.Errorf("without --sample only the ready line is printed; got:\n%s", out.String())
	}
}
