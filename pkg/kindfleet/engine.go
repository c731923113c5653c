package kindfleet

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster"
)

// Engine is the container engine that runs a kind fleet's nodes.
type Engine string

const (
	// EngineAuto is Docker where it starts privileged containers, else
	// podman where it is installed.
	EngineAuto   Engine = "auto"
	EngineDocker Engine = "docker"
	EnginePodman Engine = "podman"
)

// Engines are the values --engine takes.
var Engines = []Engine{EngineAuto, EngineDocker, EnginePodman}

// ParseEngine is the Engine named s ("" is EngineAuto).
func ParseEngine(s string) (Engine, error) {
	if s == "" {
		return EngineAuto, nil
	}
	for _, e := range Engines {
		if string(e) == s {
			return e, nil
		}
	}
	return "", fmt.Errorf("--engine %q: use auto, docker or podman", s)
}

// cli is the engine's command line, which kind itself runs.
func (e Engine) cli() cli { return cli{command: string(e)} }

// kindProvider is kind's provider of the engine's nodes.
func (e Engine) kindProvider() *cluster.Provider {
	if e == EnginePodman {
		return cluster.NewProvider(cluster.ProviderWithPodman())
	}
	return cluster.NewProvider(cluster.ProviderWithDocker())
}

// network is the engine's network kind puts nodes on (kind's
// KIND_EXPERIMENTAL_DOCKER_NETWORK or KIND_EXPERIMENTAL_PODMAN_NETWORK,
// else "kind").
func (e Engine) network(getenv func(string) string) string {
	name := "KIND_EXPERIMENTAL_DOCKER_NETWORK"
	if e == EnginePodman {
		name = "KIND_EXPERIMENTAL_PODMAN_NETWORK"
	}
	if n := getenv(name); n != "" {
		return n
	}
	return "kind"
}

// nodeImageName is how the engine names an image built here: podman takes
// a bare "federator/..." for docker.io/federator/..., which kind then
// tries to pull, so it names local images localhost/....
func (e Engine) nodeImageName(image string) string {
	if e == EnginePodman && image == LocalNodeImage {
		return "localhost/" + LocalNodeImage
	}
	return image
}

// engineChoice is what chooseEngine decided: the engine, or the problems
// that leave none.
type engineChoice struct {
	engine Engine
	// why the engine was chosen, for the progress output; "" when asked.
	why      string
	problems []string
}

// installPodman is what to run where neither engine can run kind nodes.
const installPodman = "install podman: apt-get install -y podman (docs/kind.md)"

// chooseEngine picks the engine of asked: with EngineAuto, Docker where
// dockerProblems is empty (it runs kind nodes), else podman where it is
// installed. The problems of an engine that cannot run are the caller's to
// find once it is chosen.
func chooseEngine(asked Engine, dockerProblems []string, podmanInstalled bool) engineChoice {
	switch {
	case asked != EngineAuto:
		return engineChoice{engine: asked}
	case len(dockerProblems) == 0:
		return engineChoice{engine: EngineDocker, why: "Docker starts privileged containers"}
	case podmanInstalled:
		// The gist of Docker's first problem; --engine docker tells it all.
		gist, _, _ := strings.Cut(dockerProblems[0], " (")
		gist, _, _ = strings.Cut(gist, ";")
		return engineChoice{engine: EnginePodman, why: "Docker cannot run kind nodes here (" + gist + "; --engine docker says why), podman is installed"}
	}
	problems := append([]string(nil), dockerProblems...)
	return engineChoice{engine: EngineDocker, problems: append(problems,
		fmt.Sprintf("podman, which runs kind nodes where Docker cannot, is not installed either; %s, %s", installPodman, noEngineNeeded))}
}

// ChooseEngine resolves EngineAuto on this machine (Docker's preflight
// probe, then whether podman is installed) and returns the engine with why
// it was chosen, or a *PreflightError when neither can run kind nodes.
func ChooseEngine(ctx context.Context, asked Engine) (Engine, string, error) {
	var dockerProblems []string
	if asked == EngineAuto {
		dockerProblems = EngineDocker.cli().engineProblems(ctx)
	}
	_, err := exec.LookPath(string(EnginePodman))
	c := chooseEngine(asked, dockerProblems, err == nil)
	if len(c.problems) > 0 {
		return "", "", &PreflightError{Problems: c.problems}
	}
	return c.engine, c.why, nil
}
