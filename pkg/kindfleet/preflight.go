package kindfleet

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// noEngineNeeded ends every preflight problem: the local fleet is always
// there to fall back on.
const noEngineNeeded = "or run `federator up` without --provider kind, which needs neither Docker nor podman"

// PreflightError lists what a kind fleet lacks on this machine, one
// self-contained line each.
type PreflightError struct {
	Problems []string
}

func (e *PreflightError) Error() string { return strings.Join(e.Problems, "\n") }

// cli runs a container engine's command line (docker or podman), as kind
// itself does.
type cli struct {
	// command is "docker" or "podman"; tests point it elsewhere.
	command string
}

// run returns stdout, or an error holding what docker printed on stderr.
func (d cli) run(ctx context.Context, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, d.command, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return stdout.String(), &cliError{args: args, stderr: cliMessage(stderr.String()), err: err}
	}
	return strings.TrimSpace(stdout.String()), nil
}

// cliError is a failed docker command and what it said.
type cliError struct {
	args   []string
	stderr string
	err    error
}

func (e *cliError) Error() string {
	if e.stderr == "" {
		return e.err.Error()
	}
	return e.stderr
}

func (e *cliError) Unwrap() error { return e.err }

// exitCode is docker's exit code, or -1 when docker did not run to the end.
func (e *cliError) exitCode() int {
	var exit *exec.ExitError
	if errors.As(e.err, &exit) {
		return exit.ExitCode()
	}
	return -1
}

// cliMessage is docker's error without the usage hint it appends
// ("Run 'docker run --help' for more information"), on one line.
func cliMessage(stderr string) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Run '") && strings.HasSuffix(l, "for more information") {
			continue
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, " ")
}

// Preflight checks, before anything is created, that engine (Docker or
// podman, not EngineAuto) can run a kind fleet of clusters clusters from
// nodeImage, named as that engine names it: for Docker, that the daemon
// answers and starts privileged containers (every kind node is one) and
// that the node image is present or can be pulled (LocalNodeImage, which no
// registry serves, is never pulled), and that inotify instances suffice;
// for podman, what podmanProblems checks. It returns a *PreflightError naming each problem, or nil. It leaves
// nothing behind: its probe container and image are removed.
func Preflight(ctx context.Context, engine Engine, nodeImage string, clusters int) error {
	problems, _, err := preflight(ctx, engine, nodeImage, clusters)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return &PreflightError{Problems: problems}
	}
	return nil
}

// preflight is Preflight's problems, and whether the node image is to be
// copied from Docker into podman first.
func preflight(ctx context.Context, engine Engine, nodeImage string, clusters int) (problems []string, copyFromDocker bool, err error) {
	switch engine {
	case EngineDocker:
		problems = EngineDocker.cli().preflight(ctx, nodeImage)
		// Kind nodes use inotify instances whichever engine runs them.
		if p := inotifyProblem(readInt(inotifyMaxPath), inotifyInstancesInUse(os.Getuid()), clusters); p != "" {
			problems = append(problems, p)
		}
		if modulesMissing() {
			problems = append(problems, modulesProblem(EngineDocker))
		}
		return problems, false, nil
	case EnginePodman:
		v := podmanProblems(readPodmanHost(ctx, nodeImage), nodeImage, clusters)
		return v.problems, v.copyFromDocker, nil
	}
	return nil, false, fmt.Errorf("kind fleet: preflight of engine %q: choose docker or podman first (ChooseEngine)", engine)
}

// preflight is Docker's: the engine, then the node image.
func (d cli) preflight(ctx context.Context, nodeImage string) []string {
	problems, answers := d.dockerProblems(ctx)
	if !answers {
		return problems
	}
	// Pulling hundreds of megabytes for nodes that cannot start anyway
	// would only delay the answer.
	if problem := d.imageProblem(ctx, nodeImage, len(problems) == 0); problem != "" {
		problems = append(problems, problem)
	}
	return problems
}

// engineProblems say why Docker cannot run kind nodes here; none when it can.
func (d cli) engineProblems(ctx context.Context) []string {
	problems, _ := d.dockerProblems(ctx)
	return problems
}

// dockerProblems: no docker command, no daemon, or a daemon that refuses
// privileged containers; answers says whether a daemon answered.
func (d cli) dockerProblems(ctx context.Context) (problems []string, answers bool) {
	if _, err := exec.LookPath(d.command); err != nil {
		return []string{fmt.Sprintf(
			"no Docker: the %s command is not on PATH; install Docker (kind nodes are Docker containers), %s", d.command, noEngineNeeded)}, false
	}
	if _, err := d.run(ctx, nil, "version", "--format", "{{.Server.Version}}"); err != nil {
		return []string{fmt.Sprintf(
			"no Docker daemon answers (docker version: %v); start Docker or point DOCKER_HOST at a daemon, %s", err, noEngineNeeded)}, false
	}
	return d.privilegedProblems(ctx), true
}

// imageProblem says why nodeImage cannot be had, or "" if it is present
// (or was pulled, if mayPull). LocalNodeImage is never pulled: no
// registry serves it.
func (d cli) imageProblem(ctx context.Context, nodeImage string, mayPull bool) string {
	_, err := d.run(ctx, nil, "image", "inspect", "--format", "{{.Id}}", nodeImage)
	switch {
	case err == nil:
		return ""
	case nodeImage == LocalNodeImage:
		return fmt.Sprintf("node image %s is not present locally (docker image inspect: %v); build or load it (docker load), or pass another --node-image, %s",
			nodeImage, err, noEngineNeeded)
	case !mayPull:
		return fmt.Sprintf("node image %s is not present locally (it is pulled once the problem above is solved), %s",
			nodeImage, noEngineNeeded)
	}
	if _, err := d.run(ctx, nil, "pull", nodeImage); err != nil {
		return fmt.Sprintf("node image %s is not present locally and cannot be pulled (docker pull: %v); load a kind node image (docker load) and pass it with --node-image, %s",
			nodeImage, err, noEngineNeeded)
	}
	return ""
}

// privilegedProblems start a throwaway privileged container and say why the
// daemon did not start it, or nothing if it did. The container comes from
// an empty image imported for the probe (no image need be present, and
// none is pulled) and names an executable the image lacks: the runtime
// applies a privileged container's capabilities before it looks for the
// executable, so "not found" (exit code 127) proves privileged containers
// start, while a refusal fails earlier with the runtime's own error.
func (d cli) privilegedProblems(ctx context.Context) []string {
	var problems []string
	runErr, leftover := d.probeContainer(ctx, "--privileged")
	if runErr != nil {
		hint := ""
		if strings.Contains(runErr.Error(), "unable to apply caps") {
			hint = " (the daemon runs with fewer capabilities than a privileged container is given, as in a sandbox or an unprivileged container)"
		}
		problems = append(problems, fmt.Sprintf(
			"Docker cannot start privileged containers, and every kind node is one (docker run --privileged: %v)%s; run on a Docker host that allows them, %s",
			runErr, hint, noEngineNeeded))
	}
	if leftover != nil {
		problems = append(problems, fmt.Sprintf("the preflight probe left something behind: %v; remove it by hand", leftover))
	}
	return problems
}

// probeLabel marks what the probe creates, so a test can tell it was
// removed; its value is the probing process's id, so one process's check
// is not confused by another probe running at the same time.
const probeLabel = "dev.federator.preflight"

// ProbeFilter is the `docker ps/images --filter` value that matches what
// this process's probes create.
func ProbeFilter() string { return "label=" + probeLabel + "=" + strconv.Itoa(os.Getpid()) }

// probeContainer runs a container with runArgs from an empty image. runErr
// is nil if the runtime got as far as looking for the container's
// executable; leftover says what could not be removed afterwards (the
// container and the image are removed whatever happens).
func (d cli) probeContainer(ctx context.Context, runArgs ...string) (runErr, leftover error) {
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	name := "federator-preflight-" + hex.EncodeToString(suffix)
	image := name + ":probe"

	var empty bytes.Buffer
	if err := tar.NewWriter(&empty).Close(); err != nil {
		return err, nil
	}
	if _, err := d.run(ctx, empty.Bytes(), "import", "--change", "LABEL "+probeLabel+"="+strconv.Itoa(os.Getpid()), "-", image); err != nil {
		return fmt.Errorf("importing an empty probe image first: %w", err), nil
	}
	// Cleanup must not be skipped because ctx ended (Ctrl-C during the probe).
	cleanup := context.WithoutCancel(ctx)
	defer func() {
		// --rm removes a container that ran; one the runtime refused to
		// start may remain created.
		if _, err := d.run(cleanup, nil, "rm", "--force", name); err != nil && !strings.Contains(err.Error(), "No such container") {
			leftover = errors.Join(leftover, fmt.Errorf("container %s: %w", name, err))
		}
		if _, err := d.run(cleanup, nil, "rmi", "--force", image); err != nil {
			leftover = errors.Join(leftover, fmt.Errorf("image %s: %w", image, err))
		}
	}()
	args := []string{"run", "--rm", "--name", name, "--label", probeLabel + "=" + strconv.Itoa(os.Getpid()), "--network", "none",
		"--entrypoint", "/federator-probe-absent"}
	_, err := d.run(ctx, nil, append(append(args, runArgs...), image)...)
	var dErr *cliError
	if err == nil || errors.As(err, &dErr) && (dErr.exitCode() == 127 || dErr.exitCode() == 126) {
		return nil, nil // started, then found no executable: as intended
	}
	return err, nil
}
