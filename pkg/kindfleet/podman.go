package kindfleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"
)

// The podman preflight. Where Docker refuses privileged containers because
// the host withholds a capability (CAP_SYS_RESOURCE), podman's --privileged
// grants the capabilities podman itself has, so kind nodes start, provided
// (measured, docs/kind.md):
//   - every rlimit podman asks runc to set is within what runc may set
//     here, which podman's defaults are not ("error setting rlimit type 7:
//     operation not permitted"): containers.conf's default_ulimits must set
//     nofile and nproc, and runc refused nproc above kernel.pid_max even
//     under a higher hard limit;
//   - fs.inotify.max_user_instances leaves about 27 instances per node;
//   - the node image is in podman's store, named localhost/... (a node image
//     that only Docker has is copied, which is safe: it only adds an image).
// Each missing piece is one line saying what to run. The preflight changes
// nothing on the machine: containers.conf and the inotify limit hold for
// every container and every program of the machine and outlive the fleet,
// so a person decides (and pastes one command).

// inotifyPerNode is how many inotify instances one kind node uses
// (systemd, kubelet, containerd, kube-proxy, ...), measured: 27; a fourth
// cluster failed with 128 (kube-proxy: too many open files).
const inotifyPerNode = 27

const inotifyMaxPath = "/proc/sys/fs/inotify/max_user_instances"

// containersConfPath is the containers.conf a person edits for rootful
// podman; podman reads /usr/share/containers/containers.conf before it and
// drop-ins in containers.conf.d after, and only $CONTAINERS_CONF when set.
const containersConfPath = "/etc/containers/containers.conf"

// podmanHost is what the podman preflight reads of this machine.
type podmanHost struct {
	installed bool
	// ulimits are containers.conf's default_ulimits and the file that set
	// them ("" when no file does); confErr is why a file could not be read.
	ulimits     []string
	ulimitsFrom string
	confErr     error
	// hardNofile, hardNproc are this process's hard limits (podman runs as
	// it does), pidMax is kernel.pid_max; 0 when unknown.
	hardNofile, hardNproc, pidMax uint64
	// inotifyMax is fs.inotify.max_user_instances and inotifyInUse how many
	// this user holds now; inotifyMax is 0 when unknown.
	inotifyMax, inotifyInUse int
	// imageInPodman, imageInDocker: whether each has the node image (Docker
	// under the name it builds it with, LocalNodeImage).
	imageInPodman, imageInDocker bool
	// probeErr is why podman did not start a privileged container; nil if it did.
	probeErr error
	// noModules: the host has no /lib/modules, which kind mounts into
	// every node.
	noModules bool
}

// podmanVerdict is the podman preflight's answer.
type podmanVerdict struct {
	problems []string
	// copyFromDocker: the node image is to be copied from Docker first.
	copyFromDocker bool
}

// ulimitsWanted are the default_ulimits that fit this machine: nofile at
// the hard limit (at most podman's own default, 1048576), nproc at the
// hard limit or kernel.pid_max, whichever is lower.
func (h podmanHost) ulimitsWanted() (nofile, nproc uint64) {
	nofile = min(orMax(h.hardNofile), 1048576)
	nproc = min(orMax(h.hardNproc), orMax(h.pidMax), 1048576)
	return nofile, nproc
}

func orMax(v uint64) uint64 {
	if v == 0 {
		return ^uint64(0)
	}
	return v
}

// podmanProblems judges h for a fleet of clusters kind clusters from
// nodeImage, named as podman names it.
func podmanProblems(h podmanHost, nodeImage string, clusters int) podmanVerdict {
	if !h.installed {
		return podmanVerdict{problems: []string{"no podman: the podman command is not on PATH; " + installPodman + ", " + noEngineNeeded}}
	}
	var v podmanVerdict
	configured := true
	if p := h.ulimitsProblem(); p != "" {
		v.problems = append(v.problems, p)
		configured = false
	}
	// A probe refused for its rlimits is what the line above says already.
	if h.probeErr != nil && configured {
		v.problems = append(v.problems, fmt.Sprintf(
			"podman cannot start privileged containers, and every kind node is one (podman run --privileged: %v); see docs/kind.md, %s", h.probeErr, noEngineNeeded))
	}
	if p := inotifyProblem(h.inotifyMax, h.inotifyInUse, clusters); p != "" {
		v.problems = append(v.problems, p)
	}
	if h.noModules {
		v.problems = append(v.problems, modulesProblem(EnginePodman))
	}
	switch {
	case h.imageInPodman:
	case nodeImage == EnginePodman.nodeImageName(LocalNodeImage) && h.imageInDocker:
		v.copyFromDocker = true
	case nodeImage == EnginePodman.nodeImageName(LocalNodeImage):
		v.problems = append(v.problems, fmt.Sprintf(
			"node image %s is in neither podman nor Docker; build it with `make kind-image` (in Docker; it is then copied into podman), or `podman load` another and pass it with --node-image, %s",
			nodeImage, noEngineNeeded))
	case nodeImage == DefaultKindImage:
		v.problems = append(v.problems, fmt.Sprintf(
			"node image %s is not in podman; `podman pull %s` (needs Docker Hub), or build federator's own with `make kind-image` (in Docker; it is then copied into podman and used), or pass another --node-image, %s",
			nodeImage, nodeImage, noEngineNeeded))
	default:
		v.problems = append(v.problems, fmt.Sprintf(
			"node image %s is not in podman; `podman pull %s` or `podman load` it, or pass another --node-image, %s",
			nodeImage, nodeImage, noEngineNeeded))
	}
	return v
}

// ulimitsProblem says what containers.conf lacks, or "".
func (h podmanHost) ulimitsProblem() string {
	nofile, nproc := h.ulimitsWanted()
	want := fmt.Sprintf(`default_ulimits = ["nofile=%d:%d", "nproc=%d:%d"]`, nofile, nofile, nproc, nproc)
	why := fmt.Sprintf("nofile: the hard limit here, %d; nproc: %s", nofile, nprocWhy(h, nproc))
	if h.confErr != nil {
		return fmt.Sprintf("podman's containers.conf cannot be read (%v); fix it so that its [containers] table sets %s (%s), %s",
			h.confErr, want, why, noEngineNeeded)
	}
	var wrong []string
	for _, u := range []struct {
		name  string
		limit uint64
	}{{"nofile", nofile}, {"nproc", nproc}} {
		if p := ulimitProblem(h.ulimits, u.name, u.limit); p != "" {
			wrong = append(wrong, p)
		}
	}
	if len(wrong) == 0 {
		return ""
	}
	refused := "podman's default rlimits are above what runc may set here (runc: error setting rlimit type 7: operation not permitted)"
	if h.ulimitsFrom == "" {
		return fmt.Sprintf("%s and no containers.conf sets default_ulimits; create %s: printf '[containers]\\n%s\\n' >%s (%s), %s",
			refused, containersConfPath, want, containersConfPath, why, noEngineNeeded)
	}
	return fmt.Sprintf("%s and %s's default_ulimits %s; set %s in its [containers] table (%s), %s",
		refused, h.ulimitsFrom, strings.Join(wrong, " and "), want, why, noEngineNeeded)
}

// nprocWhy says where the nproc value comes from.
func nprocWhy(h podmanHost, nproc uint64) string {
	if h.pidMax != 0 && nproc == h.pidMax && h.hardNproc > h.pidMax {
		return fmt.Sprintf("kernel.pid_max, %d, below the hard limit %d: runc refused more", nproc, h.hardNproc)
	}
	return fmt.Sprintf("the hard limit here, %d", nproc)
}

// ulimitProblem says what is wrong with name's entry of ulimits
// ("name=soft:hard" or "name=value", podman's syntax), or "".
func ulimitProblem(ulimits []string, name string, limit uint64) string {
	for _, u := range ulimits {
		n, value, ok := strings.Cut(strings.TrimSpace(u), "=")
		if !ok || n != name {
			continue
		}
		soft, hard, hasHard := strings.Cut(value, ":")
		if !hasHard {
			hard = soft
		}
		for _, s := range []string{soft, hard} {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil || v > limit {
				return fmt.Sprintf("set %s=%s, above %d", name, value, limit)
			}
		}
		return ""
	}
	return "leave " + name + " unset"
}

// inotifyProblem says whether clusters more kind nodes fit in the inotify
// instances left, or "".
func inotifyProblem(max, inUse, clusters int) string {
	need := clusters * inotifyPerNode
	if max == 0 || inUse+need <= max {
		return ""
	}
	raise := 1024
	for raise < inUse+need+128 {
		raise *= 2
	}
	return fmt.Sprintf("fs.inotify.max_user_instances is %d and %d are in use, but %d kind clusters need about %d more (%d per node); the last nodes would fail (kube-proxy: too many open files); raise it: sysctl -w fs.inotify.max_user_instances=%d (until reboot), %s",
		max, inUse, clusters, need, inotifyPerNode, raise, noEngineNeeded)
}

// modulesPath is the host directory kind bind-mounts, read-only, into
// every node (for kube-proxy's and the CNI's kernel modules); the engine
// refuses to start a node where it does not exist.
const modulesPath = "/lib/modules"

// modulesProblem is what the preflight says where modulesPath is missing
// (seen on a machine whose kernel comes from its VM: podman run: statfs
// /lib/modules: no such file or directory), for the engine that would run
// the nodes.
func modulesProblem(engine Engine) string {
	return fmt.Sprintf("%s does not exist on this machine, and kind mounts it into every node (%s run: statfs %s: no such file or directory); create it: mkdir -p %s (an empty directory will do: the nodes load no module from it), %s",
		modulesPath, engine, modulesPath, modulesPath, noEngineNeeded)
}

// modulesMissing says whether this machine lacks modulesPath.
func modulesMissing() bool {
	_, err := os.Stat(modulesPath)
	return errors.Is(err, fs.ErrNotExist)
}

// readPodmanHost reads what podmanProblems judges. It runs podman's
// privileged probe (which leaves nothing behind) only once the ulimits are
// configured: before, its failure is known.
func readPodmanHost(ctx context.Context, nodeImage string) podmanHost {
	var h podmanHost
	if _, err := exec.LookPath(string(EnginePodman)); err != nil {
		return h
	}
	h.installed = true
	h.ulimits, h.ulimitsFrom, h.confErr = readDefaultUlimits(os.Getenv("CONTAINERS_CONF"))
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil {
		h.hardNofile = rl.Max
	}
	if unix.Getrlimit(unix.RLIMIT_NPROC, &rl) == nil {
		h.hardNproc = rl.Max
	}
	h.pidMax = uint64(readInt("/proc/sys/kernel/pid_max"))
	h.inotifyMax = readInt(inotifyMaxPath)
	h.inotifyInUse = inotifyInstancesInUse(os.Getuid())
	h.noModules = modulesMissing()
	podman := EnginePodman.cli()
	h.imageInPodman = podman.hasImage(ctx, nodeImage)
	if !h.imageInPodman && nodeImage == EnginePodman.nodeImageName(LocalNodeImage) {
		if _, err := exec.LookPath(string(EngineDocker)); err == nil {
			h.imageInDocker = EngineDocker.cli().hasImage(ctx, LocalNodeImage)
		}
	}
	if h.ulimitsProblem() == "" {
		runErr, leftover := podman.probeContainer(ctx, "--privileged")
		h.probeErr = errors.Join(runErr, leftover)
	}
	return h
}

// hasImage says whether the engine has image.
func (d cli) hasImage(ctx context.Context, image string) bool {
	_, err := d.run(ctx, nil, "image", "inspect", "--format", "{{.Id}}", image)
	return err == nil
}

// readDefaultUlimits is [containers] default_ulimits as podman reads it
// (rootful): $CONTAINERS_CONF alone when set (confOverride), else
// /usr/share/containers/containers.conf, /etc/containers/containers.conf and
// /etc/containers/containers.conf.d/*.conf in order, the last to set it
// winning. from is the file that set it, "" when none does.
func readDefaultUlimits(confOverride string) (ulimits []string, from string, err error) {
	files := []string{confOverride}
	if confOverride == "" {
		dropIns, _ := filepath.Glob("/etc/containers/containers.conf.d/*.conf")
		files = append([]string{"/usr/share/containers/containers.conf", containersConfPath}, dropIns...)
	}
	for _, f := range files {
		var conf struct {
			Containers struct {
				DefaultUlimits *[]string `toml:"default_ulimits"`
			} `toml:"containers"`
		}
		_, err := toml.DecodeFile(f, &conf)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", f, err)
		}
		if conf.Containers.DefaultUlimits != nil {
			ulimits, from = *conf.Containers.DefaultUlimits, f
		}
	}
	return ulimits, from, nil
}

func readInt(path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	return n
}

// inotifyInstancesInUse counts the inotify instances of uid's processes,
// which fs.inotify.max_user_instances bounds.
func inotifyInstancesInUse(uid int) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil || int(st.Uid) != uid {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join(p, "fd"))
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(p, "fd", fd.Name())); err == nil && target == "anon_inode:inotify" {
				n++
			}
		}
	}
	return n
}

// copyImageToPodman copies image from Docker into podman as name
// (`docker save image | podman load`, then `podman tag` unless podman
// loaded it as name already: podman 4.3 names an archive's
// federator/... localhost/federator/...).
func copyImageToPodman(ctx context.Context, image, name string, printf func(string, ...any)) error {
	began := time.Now()
	printf("copying node image %s from Docker into podman as %s (docker save | podman load) ...", image, name)
	save := exec.CommandContext(ctx, string(EngineDocker), "save", image)
	load := exec.CommandContext(ctx, string(EnginePodman), "load")
	pipe, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	load.Stdin = pipe
	var saveErr, loadOut strings.Builder
	save.Stderr = &saveErr
	load.Stdout, load.Stderr = &loadOut, &loadOut
	if err := save.Start(); err != nil {
		return fmt.Errorf("kind fleet: docker save %s: %w", image, err)
	}
	loadErr := load.Run()
	if err := save.Wait(); err != nil {
		return fmt.Errorf("kind fleet: docker save %s: %w: %s", image, err, strings.TrimSpace(saveErr.String()))
	}
	if loadErr != nil {
		return fmt.Errorf("kind fleet: podman load of %s: %w: %s", image, loadErr, strings.TrimSpace(loadOut.String()))
	}
	loaded := loadedImages(loadOut.String())
	if !slices.Contains(loaded, name) {
		if len(loaded) != 1 {
			return fmt.Errorf("kind fleet: podman load of %s loaded %q; tag the image %s by hand (podman tag)", image, loaded, name)
		}
		if _, err := EnginePodman.cli().run(ctx, nil, "tag", loaded[0], name); err != nil {
			return fmt.Errorf("kind fleet: podman tag %s %s: %w", loaded[0], name, err)
		}
	}
	printf("node image copied into podman in %s", time.Since(began).Round(time.Second))
	return nil
}

// loadedImages are the names `podman load` (and `docker load`) printed:
// "Loaded image: NAME" or "Loaded image(s): NAME,NAME".
func loadedImages(output string) []string {
	var names []string
	for _, line := range strings.Split(output, "\n") {
		_, after, ok := strings.Cut(line, "Loaded image")
		if !ok {
			continue
		}
		if _, list, ok := strings.Cut(after, ": "); ok {
			for _, n := range strings.Split(list, ",") {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
		}
	}
	return names
}
