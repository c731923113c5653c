package kindfleet

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// daemonAnswers skips the test when no Docker daemon answers here.
func daemonAnswers(t *testing.T) cli {
	t.Helper()
	d := cli{command: "docker"}
	if _, err := exec.LookPath(d.command); err != nil {
		t.Skip("no docker command on PATH")
	}
	if _, err := d.run(context.Background(), nil, "version", "--format", "{{.Server.Version}}"); err != nil {
		t.Skipf("no Docker daemon answers: %v", err)
	}
	return d
}

// emptyTar is a tar archive of nothing, for `docker import`.
func emptyTar(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tar.NewWriter(&b).Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// problems is what preflight reports, failing the test if it returns
// another kind of error.
func problems(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	pe, ok := err.(*PreflightError)
	if !ok {
		t.Fatalf("preflight returned %T %v, want a *PreflightError", err, err)
	}
	return pe.Problems
}

// leftovers lists containers and images the probe labelled.
func leftovers(t *testing.T, d cli) string {
	t.Helper()
	ctx := context.Background()
	containers, err := d.run(ctx, nil, "ps", "--all", "--quiet", "--filter", ProbeFilter())
	if err != nil {
		t.Fatal(err)
	}
	images, err := d.run(ctx, nil, "images", "--quiet", "--filter", ProbeFilter())
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(containers + images)
}

func TestPreflightSaysWhenThereIsNoDockerCommand(t *testing.T) {
	got := cli{command: "federator-no-such-docker"}.preflight(context.Background(), DefaultKindImage)
	want := "no Docker: the federator-no-such-docker command is not on PATH; install Docker (kind nodes are Docker containers), or run `federator up` without --provider kind, which needs neither Docker nor podman"
	if len(got) != 1 || got[0] != want {
		t.Errorf("problems = %q, want [%q]", got, want)
	}
}

func TestPreflightSaysWhenNoDaemonAnswers(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker command on PATH")
	}
	socket := filepath.Join(t.TempDir(), "absent.sock")
	t.Setenv("DOCKER_HOST", "unix://"+socket)
	got := problems(t, Preflight(context.Background(), EngineDocker, DefaultKindImage, 1))
	// The daemon's line, and /lib/modules' where this machine lacks it
	// (the preflight says every problem it finds, not only the first).
	want := 1
	if modulesMissing() {
		want = 2
		if !slices.Contains(got, modulesProblem(EngineDocker)) {
			t.Errorf("problems = %q, want the missing %s among them", got, modulesPath)
		}
	}
	if len(got) != want {
		t.Fatalf("problems = %q, want %d lines", got, want)
	}
	for _, want := range []string{
		"no Docker daemon answers (docker version: ",
		socket,
		"); start Docker or point DOCKER_HOST at a daemon, or run `federator up` without --provider kind, which needs neither Docker nor podman",
	} {
		if !strings.Contains(got[0], want) {
			t.Errorf("problem %q lacks %q", got[0], want)
		}
	}
}

// capabilityInBoundingSet says whether this process may hold capability
// number capability; a Docker daemon in the same sandbox may not grant a
// privileged container more.
func capabilityInBoundingSet(t *testing.T, capability uint) bool {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if hex, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			set, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return set&(1<<capability) != 0
		}
	}
	t.Skip("no CapBnd line in /proc/self/status")
	return false
}

// capSysResource is CAP_SYS_RESOURCE, which Docker gives privileged
// containers and sandboxes often withhold.
const capSysResource = 24

// The probe tells a container that started (and found no executable)
// from one the runtime refused, and removes what it created either way.
// This assumes the daemon runs in this process's sandbox, so that its
// capabilities are this process's bounding set.
func TestProbeTellsStartedFromRefusedAndLeavesNothing(t *testing.T) {
	d := daemonAnswers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	runErr, leftover := d.probeContainer(ctx)
	if runErr != nil || leftover != nil {
		t.Errorf("unprivileged probe: run error %v, leftover %v; want a container that starts", runErr, leftover)
	}

	runErr, leftover = d.probeContainer(ctx, "--privileged")
	if leftover != nil {
		t.Errorf("privileged probe left %v", leftover)
	}
	if capabilityInBoundingSet(t, capSysResource) {
		if runErr != nil {
			t.Errorf("privileged probe: %v; this sandbox allows every capability, so privileged containers should start", runErr)
		}
	} else {
		want := "unable to apply caps: operation not permitted"
		if runErr == nil || !strings.Contains(runErr.Error(), want) {
			t.Errorf("privileged probe: %v; want runc's %q (CAP_SYS_RESOURCE is outside the bounding set)", runErr, want)
		}
	}
	if left := leftovers(t, d); left != "" {
		t.Errorf("the probe left containers or images behind: %s", left)
	}
}

func TestPreflightNamesEveryProblemOnOneLineEach(t *testing.T) {
	d := daemonAnswers(t)
	privileged := capabilityInBoundingSet(t, capSysResource)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if _, err := d.run(ctx, nil, "image", "inspect", LocalNodeImage); err == nil {
		t.Skipf("%s is present here; this test needs it absent", LocalNodeImage)
	}
	got := d.preflight(ctx, LocalNodeImage)
	// Each line: how it starts, what it must carry, how it ends. Docker's
	// own words in the middle vary with its version.
	type line struct{ prefix, carries, suffix string }
	var want []line
	if !privileged {
		want = append(want, line{
			"Docker cannot start privileged containers, and every kind node is one (docker run --privileged: docker: Error response from daemon: ",
			"unable to apply caps: operation not permitted",
			") (the daemon runs with fewer capabilities than a privileged container is given, as in a sandbox or an unprivileged container); run on a Docker host that allows them, or run `federator up` without --provider kind, which needs neither Docker nor podman",
		})
	}
	want = append(want, line{
		"node image " + LocalNodeImage + " is not present locally (docker image inspect: ",
		"No such image",
		"); build or load it (docker load), or pass another --node-image, or run `federator up` without --provider kind, which needs neither Docker nor podman",
	})
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d lines", strings.Join(got, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w.prefix) || !strings.Contains(got[i], w.carries) || !strings.HasSuffix(got[i], w.suffix) {
			t.Errorf("problem %d:\n%s\nwant it to start %q, carry %q, end %q", i, got[i], w.prefix, w.carries, w.suffix)
		}
	}
	for _, p := range got {
		if strings.Contains(p, "\n") {
			t.Errorf("problem spans lines: %q", p)
		}
	}
	if left := leftovers(t, d); left != "" {
		t.Errorf("preflight left containers or images behind: %s", left)
	}
}

// An image kind would pull is pulled only when nothing else is wrong, and
// an image no registry serves says so.
func TestImageProblem(t *testing.T) {
	d := daemonAnswers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const absent = "federator.invalid/absent-node:v0"

	if got, want := d.imageProblem(ctx, absent, false),
		"node image "+absent+" is not present locally (it is pulled once the problem above is solved), or run `federator up` without --provider kind, which needs neither Docker nor podman"; got != want {
		t.Errorf("without pulling:\n got %s\nwant %s", got, want)
	}
	got := d.imageProblem(ctx, absent, true)
	for _, want := range []string{
		"node image " + absent + " is not present locally and cannot be pulled (docker pull: Error response from daemon: ",
		"load a kind node image (docker load) and pass it with --node-image",
		"which needs neither Docker nor podman",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("pulling: %q lacks %q", got, want)
		}
	}
}
