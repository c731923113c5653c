package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/federator-dev/federator/pkg/kindfleet"
)

// runUp runs `federator up` with args and returns what it printed and its error.
func runUp(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand("federator")
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"up"}, args...))
	err := root.Execute()
	return out.String(), err
}

// On a machine where kind cannot run, `federator up --provider kind` says
// why, one line per problem, and leaves nothing: no fleet directory, no
// container. On this build machine the daemon answers but refuses
// privileged containers; with DOCKER_HOST pointing nowhere, no daemon
// answers at all.
func TestUpWithKindSaysWhatIsMissingAndLeavesNothing(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker command on PATH")
	}
	dir := filepath.Join(t.TempDir(), "fleet")
	t.Run("no daemon", func(t *testing.T) {
		t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "absent.sock"))
		_, err := runUp(t, "--provider", "kind", "--members", "2", "--dir", dir)
		if err == nil {
			t.Fatal("up --provider kind succeeded without a Docker daemon")
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 2 || lines[0] != "--provider kind cannot run on this machine:" ||
			!strings.HasPrefix(lines[1], "  no Docker daemon answers (docker version: ") ||
			!strings.HasSuffix(lines[1], "or run `federator up` without --provider kind, which needs no Docker") {
			t.Errorf("error:\n%s\nwant a heading and one line saying no Docker daemon answers", err)
		}
		if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
			t.Errorf("%s was created (%v); a fleet that cannot start leaves nothing", dir, statErr)
		}
	})

	t.Run("daemon refuses what kind needs", func(t *testing.T) {
		if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
			t.Skipf("no Docker daemon answers: %s", out)
		}
		_, err := runUp(t, "--provider", "kind", "--members", "2", "--dir", dir, "--node-image", "federator.invalid/node:v0")
		if err == nil {
			t.Skip("kind can run here: nothing is missing")
		}
		lines := strings.Split(err.Error(), "\n")
		if lines[0] != "--provider kind cannot run on this machine:" || len(lines) < 2 {
			t.Fatalf("error:\n%s\nwant a heading and a line per problem", err)
		}
		for _, l := range lines[1:] {
			if !strings.HasSuffix(l, "or run `federator up` without --provider kind, which needs no Docker") {
				t.Errorf("problem line %q does not say that the local fleet needs no Docker", l)
			}
		}
		if !strings.Contains(err.Error(), "node image federator.invalid/node:v0 is not present locally") {
			t.Errorf("error:\n%s\nwant a line about the absent node image", err)
		}
		if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
			t.Errorf("%s was created (%v); a fleet that cannot start leaves nothing", dir, statErr)
		}
		// The preflight probe's containers and images, and kind's nodes.
		for _, filter := range []string{kindfleet.ProbeFilter(), "label=io.x-k8s.kind.cluster"} {
			for _, list := range [][]string{{"ps", "--all"}, {"images"}} {
				left, err := exec.Command("docker", append(list, "--quiet", "--filter", filter)...).CombinedOutput()
				if err != nil || len(bytes.TrimSpace(left)) > 0 {
					t.Errorf("docker %s with %s left behind: %s %v", list[0], filter, left, err)
				}
			}
		}
	})
}

// Flags of one provider are refused with the other rather than ignored.
func TestUpRefusesFlagsOfTheOtherProvider(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--node-image", "x"}, "--node-image does not apply to --provider local"},
		{[]string{"--provider", "kind", "--nodes", "3"}, "--nodes does not apply to --provider kind"},
		{[]string{"--provider", "kind", "--bin-dir", "bin"}, "--bin-dir does not apply to --provider kind"},
		{[]string{"--provider", "vm"}, `--provider "vm": use local (no Docker needed) or kind`},
		{[]string{"--provider", "kind", "--kind-prefix", "Fleet"}, `kind cluster prefix "Fleet": use lowercase letters`},
	} {
		_, err := runUp(t, append(tc.args, "--dir", filepath.Join(t.TempDir(), "fleet"))...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("up %s: %v, want %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}
