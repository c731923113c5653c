// Package kindfleet owns kind fleets: a hub and member1..N as kind clusters
// (Docker or podman containers running real nodes), made with the kind Go
// library. It picks the engine that can run kind nodes here (ChooseEngine),
// checks before creating anything that it can (Preflight), writes the same kubeconfig layout as the local
// fleet (DIR/hub.kubeconfig, DIR/member1.kubeconfig, ...), and deletes
// every cluster it created on Stop or on any error while starting.
// Registering members and running the controllers is the caller's, exactly
// as for the local fleet (pkg/fleet).
package kindfleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/federator-dev/federator/pkg/fleet"
)

// Options say what Start creates.
type Options struct {
	// Dir receives DIR/hub.kubeconfig, DIR/member1.kubeconfig, ...
	Dir string
	// Members is the number of member clusters, member1..memberN.
	Members int
	// NodeImage is the kind node image; "" chooses one (ChooseNodeImage).
	NodeImage string
	// Prefix starts every kind cluster name; "" means DefaultPrefix.
	Prefix string
	// Engine runs the nodes; "" means EngineAuto.
	Engine Engine
}

// Fleet is a running kind fleet.
type Fleet struct {
	Hub     fleet.Endpoint
	Members []fleet.Endpoint

	provider *cluster.Provider
	engine   Engine
	// created are the kind clusters Start created, to delete on Stop.
	created []created
	log     io.Writer

	stopOnce sync.Once

	// network is kind's network of the engine; ownsNetwork says it did
	// not exist before this fleet.
	network     string
	ownsNetwork bool

	// loadedImages are the WorkloadImages every member was given.
	loadedImages []string
}

type created struct {
	// name is the fleet's name of it: hub, member1, ...
	name, kindName, kubeconfigPath string
}

var _ fleet.Running = (*Fleet)(nil)

// Endpoints returns how to reach the hub and each member.
func (f *Fleet) Endpoints() (fleet.Endpoint, []fleet.Endpoint) { return f.Hub, f.Members }

// ResolveNodeImage is asked, or LocalNodeImage (as engine names it) if
// engine has it (for podman: or Docker has it, to copy), or kind's default.
func ResolveNodeImage(ctx context.Context, engine Engine, asked string) string {
	if asked != "" {
		return asked
	}
	present := engine.cli().hasImage(ctx, engine.nodeImageName(LocalNodeImage))
	if !present && engine == EnginePodman {
		if _, err := exec.LookPath(string(EngineDocker)); err == nil {
			present = EngineDocker.cli().hasImage(ctx, LocalNodeImage)
		}
	}
	return engine.nodeImageName(ChooseNodeImage("", present))
}

// Plan is a kind fleet that can be created here: its options checked and
// the machine found able to run it.
type Plan struct {
	o        Options
	dir      string
	provider *cluster.Provider
	// engine runs the nodes, chosen because of why ("" when asked for).
	engine Engine
	why    string
	// copyNodeImage: the node image is Docker's, to be copied to podman.
	copyNodeImage bool
}

// Check validates o, chooses the engine (ChooseEngine) and the node image,
// and checks the machine (Preflight) and that no kind cluster of the
// fleet's names exists. It creates nothing: a *PreflightError says what the
// machine lacks.
func Check(ctx context.Context, o Options) (*Plan, error) {
	if o.Members < 1 {
		return nil, fmt.Errorf("kind fleet: Members is %d; a fleet needs at least one member", o.Members)
	}
	if o.Dir == "" {
		return nil, errors.New("kind fleet: Options.Dir is empty; say where the kubeconfigs go")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := ValidatePrefix(o.Prefix); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("kind fleet: kubeconfig directory %q: %w", o.Dir, err)
	}
	if o.Engine == "" {
		o.Engine = EngineAuto
	}
	engine, why, err := ChooseEngine(ctx, o.Engine)
	if err != nil {
		return nil, err
	}
	o.NodeImage = ResolveNodeImage(ctx, engine, o.NodeImage)
	problems, copyNodeImage, err := preflight(ctx, engine, o.NodeImage, len(FleetNames(o.Members)))
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &PreflightError{Problems: problems}
	}
	p := &Plan{o: o, dir: dir, provider: engine.kindProvider(), engine: engine, why: why, copyNodeImage: copyNodeImage}
	if err := p.refuseExisting(); err != nil {
		return nil, err
	}
	return p, nil
}

// Start checks (Check) and creates a kind fleet; see Plan.Start.
func Start(ctx context.Context, o Options, log io.Writer) (*Fleet, error) {
	p, err := Check(ctx, o)
	if err != nil {
		return nil, err
	}
	return p.Start(ctx, log)
}

// Start creates the hub and the members one after another and writes
// their kubeconfigs, logging progress to log (may be nil). On an error,
// or when ctx ends, it deletes every cluster it created before returning;
// a cluster being created when ctx ends is finished first (kind cannot be
// interrupted), then deleted.
func (p *Plan) Start(ctx context.Context, log io.Writer) (_ *Fleet, err error) {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, fmt.Errorf("kind fleet: creating kubeconfig directory: %w", err)
	}
	f := &Fleet{provider: p.provider, engine: p.engine, log: log, network: p.engine.network(os.Getenv)}
	if p.why != "" {
		f.printf("kind fleet: nodes run in %s: %s", p.engine, p.why)
	}
	began := time.Now()
	if p.copyNodeImage {
		if err := copyImageToPodman(ctx, LocalNodeImage, p.o.NodeImage, f.printf); err != nil {
			return nil, err
		}
	}
	// kind creates its network on the first cluster and never removes it;
	// a fleet that brought it removes it again.
	_, inspectErr := p.engine.cli().run(ctx, nil, "network", "inspect", f.network)
	f.ownsNetwork = inspectErr != nil
	defer func() {
		if err != nil {
			err = errors.Join(err, f.Stop())
		}
	}()
	for _, name := range FleetNames(p.o.Members) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("kind fleet: interrupted before creating %s: %w", ClusterName(p.o.Prefix, name), err)
		}
		endpoint, err := f.create(p.o.Prefix, name, p.o.NodeImage, p.dir)
		if err != nil {
			return nil, err
		}
		if name == fleet.HubName {
			f.Hub = endpoint
		} else {
			f.Members = append(f.Members, endpoint)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kind fleet: interrupted: %w", err)
	}
	// The hub runs no pods of workloads (its Deployments are templates).
	if err := f.loadImages(ctx, f.memberKindNames()); err != nil {
		return nil, err
	}
	f.printf("kind fleet ready: %s and %d member(s) in %s", ClusterName(p.o.Prefix, fleet.HubName), len(f.Members), time.Since(began).Round(time.Second))
	return f, nil
}

// memberKindNames are the kind clusters of the members Start created.
func (f *Fleet) memberKindNames() []string {
	var names []string
	for _, c := range f.created {
		if c.name != fleet.HubName {
			names = append(names, c.kindName)
		}
	}
	return names
}

// kindName is the kind cluster of the fleet's cluster name.
func (f *Fleet) kindName(name string) (string, error) {
	for _, c := range f.created {
		if c.name == name {
			return c.kindName, nil
		}
	}
	return "", fmt.Errorf("kind fleet: no cluster %s in this fleet", name)
}

// NetworkServer is the API server of the fleet's cluster name as other
// containers on the engine's network reach it, pods of the fleet's other
// clusters among them: https://NODE-ADDRESS:6443, which kind's API server
// certificate names. The kubeconfigs Start writes name the host's
// 127.0.0.1 instead, which only this machine reaches.
func (f *Fleet) NetworkServer(name string) (string, error) {
	kindName, err := f.kindName(name)
	if err != nil {
		return "", err
	}
	ns, err := f.provider.ListInternalNodes(kindName)
	if err != nil || len(ns) == 0 {
		return "", fmt.Errorf("kind fleet: nodes of %s: %v", kindName, err)
	}
	ipv4, _, err := ns[0].IP()
	if err != nil {
		return "", fmt.Errorf("kind fleet: address of %s: %w", ns[0].String(), err)
	}
	return "https://" + net.JoinHostPort(ipv4, "6443"), nil
}

// refuseExisting keeps Start from adopting, and Stop from deleting,
// clusters of another fleet with the same prefix.
func (p *Plan) refuseExisting() error {
	prefix := p.o.Prefix
	existing, err := p.provider.List()
	if err != nil {
		return fmt.Errorf("kind fleet: listing kind clusters: %w", err)
	}
	var clash []string
	for _, name := range FleetNames(p.o.Members) {
		if slices.Contains(existing, ClusterName(prefix, name)) {
			clash = append(clash, ClusterName(prefix, name))
		}
	}
	if len(clash) > 0 {
		return fmt.Errorf("kind fleet: kind clusters %s exist already (another fleet?); delete them with `hack/kind-down.sh %s` or choose another --kind-prefix",
			strings.Join(clash, ", "), prefix)
	}
	return nil
}

// create creates one kind cluster and writes its kubeconfig.
func (f *Fleet) create(prefix, name, nodeImage, dir string) (fleet.Endpoint, error) {
	kindName := ClusterName(prefix, name)
	kubeconfigPath := filepath.Join(dir, name+".kubeconfig")
	f.printf("creating kind cluster %s (node image %s) ...", kindName, nodeImage)
	began := time.Now()
	// Recorded first: a cluster whose creation fails half-way is deleted too.
	f.created = append(f.created, created{name: name, kindName: kindName, kubeconfigPath: kubeconfigPath})
	// kind writes its kubeconfig to the explicit path, never to the user's
	// ~/.kube/config; it is rewritten below with the fleet's context name.
	if err := f.provider.Create(kindName,
		cluster.CreateWithV1Alpha4Config(ClusterConfig(prefix, name, nodeImage)),
		cluster.CreateWithNodeImage(nodeImage),
		cluster.CreateWithKubeconfigPath(kubeconfigPath),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
	); err != nil {
		return fleet.Endpoint{}, fmt.Errorf("kind fleet: creating %s: %w%s", kindName, err, commandOutput(err))
	}
	raw, err := f.provider.KubeConfig(kindName, false)
	if err != nil {
		return fleet.Endpoint{}, fmt.Errorf("kind fleet: kubeconfig of %s: %w", kindName, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(raw))
	if err != nil {
		return fleet.Endpoint{}, fmt.Errorf("kind fleet: kubeconfig of %s: %w", kindName, err)
	}
	// Clients of a fleet are never held back by client-side rate limits.
	cfg.QPS, cfg.Burst = 1000, 2000
	if err := fleet.WriteKubeconfig(kubeconfigPath, name, cfg); err != nil {
		return fleet.Endpoint{}, fmt.Errorf("kind fleet: writing %s: %w", kubeconfigPath, err)
	}
	f.printf("kind cluster %s ready at %s in %s", kindName, cfg.Host, time.Since(began).Round(time.Second))
	return fleet.Endpoint{Name: name, Config: cfg, KubeconfigPath: kubeconfigPath}, nil
}

// commandOutput is what the command behind a kind error printed, which
// kind's error message leaves out.
func commandOutput(err error) string {
	if runErr := kindexec.RunErrorForError(err); runErr != nil && len(runErr.Output) > 0 {
		return "\n" + strings.TrimSpace(string(runErr.Output))
	}
	return ""
}

// ErrLeftBehind is in Stop's error when a kind cluster could not be deleted.
var ErrLeftBehind = errors.New("kind clusters left behind")

// Stop deletes every kind cluster Start created and the kubeconfigs it
// wrote. A second call does nothing and returns nil.
func (f *Fleet) Stop() (err error) {
	f.stopOnce.Do(func() { err = f.deleteAll() })
	return err
}

func (f *Fleet) deleteAll() error {
	var errs []error
	for _, c := range f.created {
		f.printf("deleting kind cluster %s ...", c.kindName)
		err := f.provider.Delete(c.kindName, c.kubeconfigPath)
		if err != nil {
			// Seen once under podman on a loaded machine: the node's
			// processes outlived `podman rm -f`'s SIGKILL wait ("given PIDs
			// did not die within timeout"); a second try a moment later finds
			// them gone.
			f.printf("deleting kind cluster %s failed (%v); trying once more", c.kindName, err)
			time.Sleep(3 * time.Second)
			err = f.provider.Delete(c.kindName, c.kubeconfigPath)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("kind fleet: deleting %s (delete it with `hack/kind-down.sh`): %w: %w%s", c.kindName, ErrLeftBehind, err, commandOutput(err)))
		}
		if err := os.Remove(c.kubeconfigPath); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	if f.ownsNetwork {
		// Fails while another fleet's nodes use it: then it is theirs too.
		_, err := f.engine.cli().run(context.Background(), nil, "network", "rm", f.network)
		if err != nil && !networkInUseOrGone(err) {
			errs = append(errs, fmt.Errorf("kind fleet: removing %s network %s: %w", f.engine, f.network, err))
		}
	}
	return errors.Join(errs...)
}

// networkInUseOrGone: Docker's and podman's words for a network that
// other containers still use, or that is gone already.
func networkInUseOrGone(err error) bool {
	for _, words := range []string{"active endpoints", "not found", "no such network", "is being used"} {
		if strings.Contains(strings.ToLower(err.Error()), words) {
			return true
		}
	}
	return false
}

func (f *Fleet) printf(format string, args ...any) {
	if f.log != nil {
		fmt.Fprintf(f.log, format+"\n", args...)
	}
}
