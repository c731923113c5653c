// Package framework owns what the end-to-end suite (test/e2e) and the scale
// benchmark (test/scale) share: a local fleet with federator's controllers
// running in the test process, the objects a test writes to the hub, reads
// of what members and Works hold, and a Recorder of every version of an
// object a cluster stores. It knows neither Ginkgo nor testing.B: reads and
// writes return errors, and a condition is a func(context.Context) error that
// is nil once it holds, so Gomega's Eventually(...).Should(Succeed()) and
// Wait both use it.
package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/install/crds"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/pkg/hubinstall"
	"github.com/federator-dev/federator/pkg/kindfleet"
	"github.com/federator-dev/federator/pkg/membership"
)

// Fleet providers: what the clusters of Options.Provider are.
const (
	ProviderLocal = "local"
	ProviderKind  = "kind"
)

// Options say what fleet Start starts and how the controllers run.
type Options struct {
	// Dir receives the fleet's kubeconfigs.
	Dir string
	// Members is the number of member clusters, member1..memberN.
	Members int
	// BinDir holds kube-apiserver, etcd and kube-controller-manager; ""
	// means BinDir().
	BinDir string
	// ControllerManager runs kube-controller-manager in every cluster, with
	// the controllers fleet.Options.ControllerManager says.
	ControllerManager bool
	// Workloads makes members run pods (fleet.Options.Workloads), with
	// Nodes simulated nodes each (0: fleet.DefaultNodes).
	Workloads bool
	Nodes     int
	// Prometheus runs Debian's prometheus beside a local fleet, scraping
	// the members' stand-in application metrics (fleet.Options.Prometheus;
	// Env.Fleet.PrometheusURL says where).
	Prometheus bool
	// Log receives the fleet's progress lines; may be nil.
	Log io.Writer
	// Provider says what the clusters are: ProviderLocal (also "") or
	// ProviderKind (kind clusters; ControllerManager, Workloads, Nodes and
	// BinDir do not apply, members are real clusters).
	Provider string
	// KindPrefix starts the kind clusters' names; "" is kindfleet's default.
	KindPrefix string
	// Controllers are the options federator's controllers run with.
	Controllers hub.Options
	// ChooseAddresses, when set, sets the addresses the controllers serve
	// on (metrics, webhook) in the options it is given. It is called once
	// the fleet is up, right before the controllers start, so the fleet's
	// own programs cannot take a port chosen free earlier; and again, up to
	// controllerStartTries times, when a port was taken all the same.
	ChooseAddresses func(*hub.Options)
	// WrapHubTransport, when set, wraps the transport of Env.Hub (the
	// test's own hub client, not the controllers'), e.g. to count its writes.
	WrapHubTransport func(http.RoundTripper) http.RoundTripper
	// ReadyTimeout bounds the wait for the controllers to run; 0 means 2 minutes.
	ReadyTimeout time.Duration
}

// Env is a running fleet, federator's controllers running against its hub
// in this process, and the test's own clients.
type Env struct {
	// Fleet is the local fleet, for what only it can do (stop a member's
	// API server, slow it down); nil with ProviderKind.
	Fleet *fleet.Fleet
	// Running is the fleet of any provider; HubEndpoint and
	// MemberEndpoints say how to reach its clusters.
	Running         fleet.Running
	HubEndpoint     fleet.Endpoint
	MemberEndpoints map[string]fleet.Endpoint
	// Hub is the test's client of the hub, with federator's scheme.
	Hub   client.Client
	HubCS kubernetes.Interface
	// Members and MemberCS are the test's clients of each member, by name.
	Members  map[string]client.Client
	MemberCS map[string]kubernetes.Interface

	hubDynamic     dynamic.Interface
	memberDynamics map[string]dynamic.Interface

	stopControllers context.CancelFunc
	controllersDone chan error
}

// BinDir is where the fleet's binaries are: $KUBEBUILDER_ASSETS, else bin/
// at the root of the module (found from the working directory up).
func BinDir() (string, error) {
	if v := os.Getenv("KUBEBUILDER_ASSETS"); v != "" {
		return v, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "bin"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory and no $KUBEBUILDER_ASSETS: where are the fleet's binaries?")
		}
		dir = parent
	}
}

// Start starts a fleet with federator's CRDs on the hub, registers every
// member as `karmadactl join` does and runs the controllers until Stop. On
// an error it stops what it started.
func Start(ctx context.Context, o Options) (_ *Env, err error) {
	if o.BinDir == "" {
		if o.BinDir, err = BinDir(); err != nil {
			return nil, err
		}
	}
	e := &Env{Members: map[string]client.Client{}, MemberCS: map[string]kubernetes.Interface{},
		memberDynamics: map[string]dynamic.Interface{}, MemberEndpoints: map[string]fleet.Endpoint{}}
	switch o.Provider {
	case ProviderKind:
		kf, err := kindfleet.Start(ctx, kindfleet.Options{Dir: o.Dir, Members: o.Members, Prefix: o.KindPrefix}, o.Log)
		if err != nil {
			return nil, fmt.Errorf("start the kind fleet: %w", err)
		}
		e.Running = kf
	case ProviderLocal, "":
		crdList, err := crds.CRDs()
		if err != nil {
			return nil, err
		}
		f, err := fleet.Start(ctx, fleet.Options{Dir: o.Dir, Members: o.Members, BinDir: o.BinDir, CRDs: crdList,
			ControllerManager: o.ControllerManager, Workloads: o.Workloads, Nodes: o.Nodes, Prometheus: o.Prometheus, Log: o.Log})
		if err != nil {
			return nil, fmt.Errorf("start the fleet (run `make binaries` first): %w", err)
		}
		e.Fleet, e.Running = f, f
	default:
		return nil, fmt.Errorf("fleet provider %q: use %s or %s", o.Provider, ProviderLocal, ProviderKind)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Stop())
		}
	}()
	hubEndpoint, memberEndpoints := e.Running.Endpoints()
	e.HubEndpoint = hubEndpoint

	hubConfig := rest.CopyConfig(hubEndpoint.Config)
	hubConfig.WrapTransport = o.WrapHubTransport
	if e.Hub, err = client.New(hubConfig, client.Options{Scheme: policy.NewScheme()}); err != nil {
		return nil, err
	}
	if e.HubCS, err = kubernetes.NewForConfig(hubEndpoint.Config); err != nil {
		return nil, err
	}
	if e.hubDynamic, err = dynamic.NewForConfig(hubEndpoint.Config); err != nil {
		return nil, err
	}
	if o.Provider == ProviderKind {
		// A kind hub starts without federator's CRDs; the local fleet's
		// has them from the start.
		if _, err := hubinstall.Install(ctx, e.Hub); err != nil {
			return nil, fmt.Errorf("install the CRDs on the kind hub: %w", err)
		}
	}
	for _, m := range memberEndpoints {
		e.MemberEndpoints[m.Name] = m
		if err := membership.Register(ctx, e.Hub, m.Name, m.Config); err != nil {
			return nil, fmt.Errorf("register %s: %w", m.Name, err)
		}
		if e.Members[m.Name], err = client.New(m.Config, client.Options{Scheme: policy.NewScheme()}); err != nil {
			return nil, err
		}
		if e.MemberCS[m.Name], err = kubernetes.NewForConfig(m.Config); err != nil {
			return nil, err
		}
		if e.memberDynamics[m.Name], err = dynamic.NewForConfig(m.Config); err != nil {
			return nil, err
		}
	}

	limit := o.ReadyTimeout
	if limit == 0 {
		limit = 2 * time.Minute
	}
	for try := 1; ; try++ {
		if o.ChooseAddresses != nil {
			o.ChooseAddresses(&o.Controllers)
		}
		err := e.startControllers(hubEndpoint.Config, o.Controllers, limit)
		if err == nil {
			return e, nil
		}
		if o.ChooseAddresses == nil || try == controllerStartTries || !strings.Contains(err.Error(), "address already in use") {
			return nil, err
		}
		if o.Log != nil {
			fmt.Fprintf(o.Log, "framework: %v; starting the controllers again on other ports\n", err)
		}
	}
}

// controllerStartTries is how often the controllers are started when a
// port chosen for them was taken meanwhile.
const controllerStartTries = 3

// startControllers runs federator's controllers against the hub and returns
// once they are ready; on error they are stopped.
func (e *Env) startControllers(hubConfig *rest.Config, o hub.Options, limit time.Duration) error {
	runCtx, stop := context.WithCancel(context.Background())
	e.stopControllers = stop
	e.controllersDone = make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		e.controllersDone <- hub.Run(runCtx, hubConfig, o, func() { close(ready) })
	}()
	select {
	case <-ready:
		return nil
	case err := <-e.controllersDone:
		e.controllersDone = nil
		stop()
		e.stopControllers = nil
		return fmt.Errorf("controllers stopped before they were ready: %w", err)
	case <-time.After(limit):
		return fmt.Errorf("controllers not ready within %s", limit)
	}
}

// MemberNames are the members' names, sorted.
func (e *Env) MemberNames() []string {
	out := make([]string, 0, len(e.Members))
	for m := range e.Members {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Stop stops the controllers, then every process of the fleet. It returns
// the controllers' error, if they stopped on one, with the fleet's.
func (e *Env) Stop() error {
	var errs []error
	if e.stopControllers != nil {
		e.stopControllers()
		if e.controllersDone != nil {
			select {
			case err := <-e.controllersDone:
				if err != nil {
					errs = append(errs, fmt.Errorf("controllers: %w", err))
				}
			case <-time.After(time.Minute):
				errs = append(errs, errors.New("controllers did not stop within a minute"))
			}
		}
		e.stopControllers = nil
	}
	if e.Running != nil {
		errs = append(errs, e.Running.Stop())
	}
	return errors.Join(errs...)
}
