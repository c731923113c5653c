package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federator-dev/federator/config/samples"
	"github.com/federator-dev/federator/pkg/kindfleet"
	"github.com/federator-dev/federator/pkg/yamldocs"
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
		_, err := runUp(t, "--provider", "kind", "--members", "2", "--dir", dir, "--engine", "docker")
		if err == nil {
			t.Fatal("up --provider kind succeeded without a Docker daemon")
		}
		lines := strings.Split(err.Error(), "\n")
		want := 2
		if _, statErr := os.Stat("/lib/modules"); statErr != nil {
			// A machine without /lib/modules: the preflight says that too,
			// on a line of its own after the daemon's.
			want = 3
		}
		if len(lines) != want || lines[0] != "--provider kind cannot run on this machine:" ||
			!strings.HasPrefix(lines[1], "  no Docker daemon answers (docker version: ") ||
			!strings.HasSuffix(lines[1], "or run `federator up` without --provider kind, which needs neither Docker nor podman") ||
			want == 3 && !strings.HasPrefix(lines[2], "  /lib/modules does not exist on this machine") {
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
		_, err := runUp(t, "--provider", "kind", "--members", "2", "--dir", dir, "--node-image", "federator.invalid/node:v0", "--engine", "docker")
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
	_, err = runUp(t, "--provider", "kind", "--members", "2", "--dir", dir)
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

// Flags of one provider are refused with the other rather than ignored.
func TestUpRefusesFlagsOfTheOtherProvider(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--node-image", "x"}, "--node-image does not apply to --provider local"},
		{[]string{"--provider", "kind", "--nodes", "3"}, "--nodes does not apply to --provider kind"},
		{[]string{"--provider", "kind", "--bin-dir", "bin"}, "--bin-dir does not apply to --provider kind"},
		{[]string{"--provider", "kind", "--prometheus"}, "--prometheus does not apply to --provider kind"},
		{[]string{"--provider", "vm"}, `--provider "vm": use local (no container engine needed) or kind`},
		{[]string{"--engine", "podman"}, "--engine does not apply to --provider local"},
		{[]string{"--provider", "kind", "--engine", "lxc"}, `--engine "lxc": use auto, docker or podman`},
		{[]string{"--provider", "kind", "--kind-prefix", "Fleet"}, `kind cluster prefix "Fleet": use lowercase letters`},
	} {
		_, err := runUp(t, append(tc.args, "--dir", filepath.Join(t.TempDir(), "fleet"))...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("up %s: %v, want %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// Where kind members have the workload images, the sample runs
// federator/web with a readiness probe its -broken tags fail, and the
// printed steps name its tags; everything else of the sample is unchanged.
func TestKindSampleRunsTheWorkloadImage(t *testing.T) {
	o := upOptions{provider: providerKind, workloads: true, kindWorkloads: true, sample: true}
	objs, err := yamldocs.Decode(o.sampleRollout())
	if err != nil {
		t.Fatal(err)
	}
	want, err := yamldocs.Decode(samples.Rollout)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != len(want) {
		t.Fatalf("%d objects, want the sample's %d", len(objs), len(want))
	}
	for i, u := range objs {
		if u.GetKind() != "Deployment" {
			if !reflect.DeepEqual(u.Object, want[i].Object) {
				t.Errorf("%s %s changed: %v", u.GetKind(), u.GetName(), u.Object)
			}
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		if c["image"] != "federator/web:1.25" {
			t.Errorf("image %v, want federator/web:1.25", c["image"])
		}
		probe, _, _ := unstructured.NestedMap(c, "readinessProbe", "httpGet")
		if probe["path"] != "/readyz" || fmt.Sprint(probe["port"]) != "8080" {
			t.Errorf("readinessProbe.httpGet %v, want /readyz on 8080 (the workload image's)", probe)
		}
	}
	if !o.staged() {
		t.Error("a kind fleet with the workload images does not get the sample's Rollout")
	}
	if (upOptions{provider: providerKind, workloads: true}).staged() {
		t.Error("a kind fleet without the workload images gets the sample's Rollout; -broken would fail nowhere")
	}
	if got := (upOptions{provider: providerKind, workloads: true}).sampleRollout(); !bytes.Equal(got, samples.Rollout) {
		t.Error("a kind fleet without the workload images gets a changed sample")
	}

	var out bytes.Buffer
	printReady(&out, sampleFleet(t.TempDir(), "member1", "member2", "member3"), o, time.Second)
	for _, want := range []string{
		"Deployment demo/web (federator/web:1.25) goes to every member",
		"1. Roll out federator/web:1.26; it walks through the stages by itself",
		"set image deploy/web web=federator/web:1.27-broken\n",
		"2. Roll out federator/web:1.27-broken; only member1 gets it, its new pod never becomes ready, and within a minute the rollout fails (status exits 1) and puts member1 back on federator/web:1.26;",
		"4. Roll out federator/web:1.28 and pause it",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "nginx") {
		t.Errorf("nginx named where members run federator/web:\n%s", out.String())
	}
}
