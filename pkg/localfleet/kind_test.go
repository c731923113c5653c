package localfleet

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/pkg/kindfleet"
)

// runKind runs a kind fleet of two members in dir, as `federator up
// --provider kind --members 2 --dir DIR` does with --engine engine and
// --node-image nodeImage, and returns its error.
func runKind(t *testing.T, dir string, engine kindfleet.Engine, nodeImage string) error {
	t.Helper()
	return Run(context.Background(), io.Discard, Options{Members: 2, Dir: dir, Hub: hub.DefaultOptions(), Provider: ProviderKind,
		NodeImage: nodeImage, KindPrefix: kindfleet.DefaultPrefix, Engine: engine})
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
		err := runKind(t, dir, kindfleet.EngineDocker, "")
		if err == nil {
			t.Fatal("up --provider kind succeeded without a Docker daemon")
		}
		// The daemon's line; where /lib/modules is missing, a line saying
		// so; and, on a machine whose inotify instances are mostly taken
		// (API servers running beside the test), a line saying that.
		const suffix = "or run `federator up` without --provider kind, which needs neither Docker nor podman"
		lines := strings.Split(err.Error(), "\n")
		_, statErr := os.Stat("/lib/modules")
		modulesLine := false
		for _, l := range lines[min(2, len(lines)):] {
			switch {
			case statErr != nil && strings.HasPrefix(l, "  /lib/modules does not exist on this machine"):
				modulesLine = true
			case strings.HasPrefix(l, "  fs.inotify.max_user_instances is "):
			default:
				t.Errorf("unexpected problem line %q", l)
			}
			if !strings.HasSuffix(l, suffix) {
				t.Errorf("problem line %q does not say that the local fleet needs no Docker", l)
			}
		}
		if len(lines) < 2 || lines[0] != "--provider kind cannot run on this machine:" ||
			!strings.HasPrefix(lines[1], "  no Docker daemon answers (docker version: ") || !strings.HasSuffix(lines[1], suffix) ||
			(statErr != nil) != modulesLine {
			t.Errorf("error:\n%s\nwant a heading and one line saying no Docker daemon answers (and one saying /lib/modules is missing, where it is)", err)
		}
		if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
			t.Errorf("%s was created (%v); a fleet that cannot start leaves nothing", dir, statErr)
		}
	})

	t.Run("daemon refuses what kind needs", func(t *testing.T) {
		if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
			t.Skipf("no Docker daemon answers: %s", out)
		}
		err := runKind(t, dir, kindfleet.EngineDocker, "federator.invalid/node:v0")
		if err == nil {
			t.Skip("kind can run here: nothing is missing")
		}
		lines := strings.Split(err.Error(), "\n")
		if lines[0] != "--provider kind cannot run on this machine:" || len(lines) < 2 {
			t.Fatalf("error:\n%s\nwant a heading and a line per problem", err)
		}
		for _, l := range lines[1:] {
			if !strings.HasSuffix(l, "or run `federator up` without --provider kind, which needs neither Docker nor podman") {
				t.Errorf("problem line %q does not say that the local fleet needs no Docker", l)
			}
		}
		if !strings.Contains(err.Error(), "node image federator.invalid/node:v0 is not present locally") {
			t.Errorf("error:\n%s\nwant a line about the absent node image", err)
		}
		if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
			t.Errorf("%s was created (%v); a fleet that cannot start leaves nothing", dir, statErr)
		}
		// The preflight probe's containers and images, and the nodes of
		// this fleet's kind clusters (another package's tests, run beside
		// these, make kind nodes of their own).
		filters := []string{kindfleet.ProbeFilter()}
		for _, name := range []string{"hub", "member1", "member2"} {
			filters = append(filters, "label=io.x-k8s.kind.cluster="+kindfleet.ClusterName(kindfleet.DefaultPrefix, name))
		}
		for _, filter := range filters {
			for _, list := range [][]string{{"ps", "--all"}, {"images"}} {
				left, err := exec.Command("docker", append(list, "--quiet", "--filter", filter)...).CombinedOutput()
				if err != nil || len(bytes.TrimSpace(left)) > 0 {
					t.Errorf("docker %s with %s left behind: %s %v", list[0], filter, left, err)
				}
			}
		}
	})
}

// With --engine auto, a Docker that refuses kind's nodes and no podman:
// Docker's problems, then a line saying to install podman.
func TestUpWithKindAndNeitherEngineSaysInstallPodman(t *testing.T) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker command on PATH")
	}
	if out, err := exec.Command(docker, "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker daemon answers: %s", out)
	}
	// A PATH with docker and without podman.
	bin := t.TempDir()
	if err := os.Symlink(docker, filepath.Join(bin, "docker")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	dir := filepath.Join(t.TempDir(), "fleet")
	err = runKind(t, dir, kindfleet.EngineAuto, "")
	if err == nil {
		t.Skip("kind runs on this Docker: auto does not look for podman")
	}
	lines := strings.Split(err.Error(), "\n")
	want := "  podman, which runs kind nodes where Docker cannot, is not installed either; install podman: apt-get install -y podman (docs/kind.md), or run `federator up` without --provider kind, which needs neither Docker nor podman"
	if len(lines) < 3 || lines[0] != "--provider kind cannot run on this machine:" || lines[len(lines)-1] != want {
		t.Errorf("error:\n%s\nwant a heading, Docker's problems, then\n%s", err, want)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("%s was created (%v); a fleet that cannot start leaves nothing", dir, statErr)
	}
}
