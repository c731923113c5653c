package kindfleet

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// This machine, as measured (docs/kind.md): hard limits nofile 20000 and
// nproc 96364, kernel.pid_max 32768, 128 inotify instances.
var measured = podmanHost{installed: true, hardNofile: 20000, hardNproc: 96364, pidMax: 32768, inotifyMax: 128,
	ulimits: []string{"nofile=20000:20000", "nproc=32768:32768"}, ulimitsFrom: containersConfPath, imageInPodman: true}

var podmanLocalImage = EnginePodman.nodeImageName(LocalNodeImage)

func TestPodmanProblems(t *testing.T) {
	with := func(change func(*podmanHost)) podmanHost {
		h := measured
		change(&h)
		return h
	}
	const createConf = `create /etc/containers/containers.conf: printf '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]\n' >/etc/containers/containers.conf (nofile: the hard limit here, 20000; nproc: kernel.pid_max, 32768, below the hard limit 96364: runc refused more), `
	for _, tc := range []struct {
		name     string
		host     podmanHost
		image    string
		clusters int
		// want are the problems, each matched by its start (the rest is
		// checked by the line's end: noEngineNeeded).
		want     []string
		wantCopy bool
	}{
		{name: "everything there", host: measured, image: podmanLocalImage, clusters: 4},
		{name: "podman not installed", host: podmanHost{}, image: podmanLocalImage, clusters: 4,
			want: []string{"no podman: the podman command is not on PATH; install podman: apt-get install -y podman (docs/kind.md), " + noEngineNeeded}},
		{name: "no containers.conf sets default_ulimits", image: podmanLocalImage, clusters: 2,
			host: with(func(h *podmanHost) { h.ulimits, h.ulimitsFrom = nil, "" }),
			want: []string{"podman's default rlimits are above what runc may set here (runc: error setting rlimit type 7: operation not permitted) and no containers.conf sets default_ulimits; " +
				createConf + noEngineNeeded}},
		{name: "default_ulimits too high or incomplete", image: podmanLocalImage, clusters: 2,
			host: with(func(h *podmanHost) { h.ulimits = []string{"nofile=1048576:1048576"} }),
			want: []string{"podman's default rlimits are above what runc may set here (runc: error setting rlimit type 7: operation not permitted) and /etc/containers/containers.conf's default_ulimits set nofile=1048576:1048576, above 20000 and leave nproc unset; " +
				`set default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"] in its [containers] table (nofile: the hard limit here, 20000; nproc: kernel.pid_max, 32768, below the hard limit 96364: runc refused more), ` + noEngineNeeded}},
		{name: "nproc at the hard limit is above pid_max", image: podmanLocalImage, clusters: 2,
			host: with(func(h *podmanHost) { h.ulimits = []string{"nofile=20000", "nproc=96364:96364"} }),
			want: []string{"podman's default rlimits are above what runc may set here (runc: error setting rlimit type 7: operation not permitted) and /etc/containers/containers.conf's default_ulimits set nproc=96364:96364, above 32768; "}},
		{name: "unlimited is too high", image: podmanLocalImage, clusters: 2,
			host: with(func(h *podmanHost) { h.ulimits = []string{"nofile=20000:20000", "nproc=-1"} }),
			want: []string{"podman's default rlimits are above what runc may set here (runc: error setting rlimit type 7: operation not permitted) and /etc/containers/containers.conf's default_ulimits set nproc=-1, above 32768; "}},
		{name: "containers.conf unreadable", image: podmanLocalImage, clusters: 2,
			host: with(func(h *podmanHost) {
				h.confErr = errors.New("/etc/containers/containers.conf: toml: line 3: expected '='")
			}),
			want: []string{"podman's containers.conf cannot be read (/etc/containers/containers.conf: toml: line 3: expected '='); fix it so that its [containers] table sets default_ulimits = "}},
		{name: "no /lib/modules to mount into the nodes", image: podmanLocalImage, clusters: 2,
			host: with(func(h *podmanHost) { h.noModules = true }),
			want: []string{"/lib/modules does not exist on this machine, and kind mounts it into every node (podman run: statfs /lib/modules: no such file or directory); create it: mkdir -p /lib/modules "}},
		{name: "a privileged container refused otherwise", image: podmanLocalImage, clusters: 2,
			host: with(func(h *podmanHost) { h.probeErr = errors.New("Error: crun: mount: permission denied") }),
			want: []string{"podman cannot start privileged containers, and every kind node is one (podman run --privileged: Error: crun: mount: permission denied); see docs/kind.md, "}},
		{name: "a probe refused for its rlimits is said once", image: podmanLocalImage, clusters: 2,
			host: with(func(h *podmanHost) {
				h.ulimits, h.ulimitsFrom = nil, ""
				h.probeErr = errors.New("error setting rlimit type 7")
			}),
			want: []string{"podman's default rlimits are above what runc may set here"}},
		{name: "inotify instances for 3 clusters", image: podmanLocalImage, clusters: 3,
			host: with(func(h *podmanHost) { h.inotifyInUse = 40 })},
		{name: "inotify instances run out at the 4th cluster", image: podmanLocalImage, clusters: 4,
			host: with(func(h *podmanHost) { h.inotifyInUse = 40 }),
			want: []string{"fs.inotify.max_user_instances is 128 and 40 are in use, but 4 kind clusters need about 108 more (27 per node); the last nodes would fail (kube-proxy: too many open files); raise it: sysctl -w fs.inotify.max_user_instances=1024 (until reboot), "}},
		{name: "node image only in Docker is copied", image: podmanLocalImage, clusters: 2, wantCopy: true,
			host: with(func(h *podmanHost) { h.imageInPodman, h.imageInDocker = false, true })},
		{name: "node image nowhere", image: podmanLocalImage, clusters: 2,
			host: with(func(h *podmanHost) { h.imageInPodman = false }),
			want: []string{"node image localhost/federator/kind-node:v1.34.1 is in neither podman nor Docker; build it with `make kind-image` (in Docker; it is then copied into podman), or `podman load` another and pass it with --node-image, "}},
		{name: "kind's image absent", image: DefaultKindImage, clusters: 2,
			host: with(func(h *podmanHost) { h.imageInPodman = false }),
			want: []string{"node image " + DefaultKindImage + " is not in podman; `podman pull " + DefaultKindImage + "` (needs Docker Hub), or build federator's own with `make kind-image` (in Docker; it is then copied into podman and used), or pass another --node-image, "}},
		{name: "another node image absent", image: "kindest/node:v1.34.0", clusters: 2,
			host: with(func(h *podmanHost) { h.imageInPodman, h.imageInDocker = false, true }),
			want: []string{"node image kindest/node:v1.34.0 is not in podman; `podman pull kindest/node:v1.34.0` or `podman load` it, or pass another --node-image, "}},
		{name: "every problem, one line each", image: podmanLocalImage, clusters: 5,
			host: with(func(h *podmanHost) { h.ulimits, h.ulimitsFrom, h.imageInPodman = nil, "", false }),
			want: []string{"podman's default rlimits", "fs.inotify.max_user_instances is 128 and 0 are in use, but 5 kind clusters need about 135 more", "node image localhost/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := podmanProblems(tc.host, tc.image, tc.clusters)
			if len(v.problems) != len(tc.want) {
				t.Fatalf("problems:\n%s\nwant %d, starting:\n%s", strings.Join(v.problems, "\n"), len(tc.want), strings.Join(tc.want, "\n"))
			}
			for i, p := range v.problems {
				if !strings.HasPrefix(p, tc.want[i]) || !strings.HasSuffix(p, noEngineNeeded) || strings.Contains(p, "\n") {
					t.Errorf("problem %d:\n%s\nwant one line starting\n%s\nending %q", i, p, tc.want[i], noEngineNeeded)
				}
			}
			if v.copyFromDocker != tc.wantCopy {
				t.Errorf("copyFromDocker = %v, want %v", v.copyFromDocker, tc.wantCopy)
			}
		})
	}
}

// Without a pid_max below it, nproc is the hard limit; nofile is never
// above podman's own default.
func TestUlimitsWanted(t *testing.T) {
	for _, tc := range []struct {
		host                 podmanHost
		wantNofile, wantProc uint64
	}{
		{measured, 20000, 32768},
		{podmanHost{hardNofile: 1 << 30, hardNproc: 4096, pidMax: 4194304}, 1048576, 4096},
		{podmanHost{}, 1048576, 1048576},
	} {
		if nofile, nproc := tc.host.ulimitsWanted(); nofile != tc.wantNofile || nproc != tc.wantProc {
			t.Errorf("%+v: nofile %d nproc %d, want %d %d", tc.host, nofile, nproc, tc.wantNofile, tc.wantProc)
		}
	}
}

// containers.conf is read as podman reads it: the last file that sets
// default_ulimits wins; $CONTAINERS_CONF alone when set.
func TestReadDefaultUlimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	conf := write("good.conf", "[containers]\ndefault_ulimits = [\n  \"nofile=20000:20000\",\n  \"nproc=32768:32768\",\n]\n[engine]\nevents_logger = \"file\"\n")
	got, from, err := readDefaultUlimits(conf)
	if err != nil || from != conf || !slices.Equal(got, []string{"nofile=20000:20000", "nproc=32768:32768"}) {
		t.Errorf("readDefaultUlimits(%s) = %q, %q, %v", conf, got, from, err)
	}
	unset := write("unset.conf", "[containers]\nlog_size_max = -1\n")
	if got, from, err := readDefaultUlimits(unset); err != nil || from != "" || got != nil {
		t.Errorf("readDefaultUlimits(%s) = %q, %q, %v; want nothing set", unset, got, from, err)
	}
	bad := write("bad.conf", "[containers]\ndefault_ulimits = [\"nofile=1\"\n")
	if _, _, err := readDefaultUlimits(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("readDefaultUlimits(%s): %v, want an error naming the file", bad, err)
	}
}

func TestChooseEngine(t *testing.T) {
	refused := []string{"Docker cannot start privileged containers, and every kind node is one (...)"}
	for _, tc := range []struct {
		name            string
		asked           Engine
		dockerProblems  []string
		podmanInstalled bool
		want            Engine
		wantWhy         string
		wantProblems    []string
	}{
		{name: "docker asked", asked: EngineDocker, dockerProblems: refused, podmanInstalled: true, want: EngineDocker},
		{name: "podman asked", asked: EnginePodman, want: EnginePodman},
		{name: "auto, Docker runs kind", asked: EngineAuto, podmanInstalled: true, want: EngineDocker, wantWhy: "Docker starts privileged containers"},
		{name: "auto, Docker refuses, podman there", asked: EngineAuto, dockerProblems: refused, podmanInstalled: true, want: EnginePodman,
			wantWhy: "Docker cannot run kind nodes here (Docker cannot start privileged containers, and every kind node is one; --engine docker says why), podman is installed"},
		{name: "auto, neither", asked: EngineAuto, dockerProblems: refused, want: EngineDocker,
			wantProblems: append(append([]string(nil), refused...),
				"podman, which runs kind nodes where Docker cannot, is not installed either; install podman: apt-get install -y podman (docs/kind.md), "+noEngineNeeded)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := chooseEngine(tc.asked, tc.dockerProblems, tc.podmanInstalled)
			if c.engine != tc.want || c.why != tc.wantWhy || !slices.Equal(c.problems, tc.wantProblems) {
				t.Errorf("chooseEngine = %+v, want engine %s, why %q, problems %q", c, tc.want, tc.wantWhy, tc.wantProblems)
			}
		})
	}
}

func TestParseEngine(t *testing.T) {
	for in, want := range map[string]Engine{"": EngineAuto, "auto": EngineAuto, "docker": EngineDocker, "podman": EnginePodman} {
		if got, err := ParseEngine(in); err != nil || got != want {
			t.Errorf("ParseEngine(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseEngine("containerd"); err == nil || err.Error() != `--engine "containerd": use auto, docker or podman` {
		t.Errorf("ParseEngine(containerd): %v", err)
	}
}

// podman names a locally built image localhost/...; kind would pull a bare name.
func TestNodeImageName(t *testing.T) {
	for _, tc := range []struct {
		engine      Engine
		image, want string
	}{
		{EnginePodman, LocalNodeImage, "localhost/federator/kind-node:v1.34.1"},
		{EngineDocker, LocalNodeImage, LocalNodeImage},
		{EnginePodman, DefaultKindImage, DefaultKindImage},
	} {
		if got := tc.engine.nodeImageName(tc.image); got != tc.want {
			t.Errorf("%s.nodeImageName(%s) = %s, want %s", tc.engine, tc.image, got, tc.want)
		}
	}
}

func TestLoadedImages(t *testing.T) {
	for out, want := range map[string][]string{
		"Getting image source signatures\nStoring signatures\nLoaded image: localhost/federator/kind-node:v1.34.1\n": {"localhost/federator/kind-node:v1.34.1"},
		"Loaded image(s): docker.io/federator/web:1.25,docker.io/federator/web:1.26\n":                               {"docker.io/federator/web:1.25", "docker.io/federator/web:1.26"},
		"Storing signatures\n": nil,
	} {
		if got := loadedImages(out); !slices.Equal(got, want) {
			t.Errorf("loadedImages(%q) = %q, want %q", out, got, want)
		}
	}
}
