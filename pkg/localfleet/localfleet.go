// Package localfleet owns `federator up`: a local fleet (envtest API
// servers or kind clusters), the hub's controllers and pull agents on it,
// the sample staged rollout, and what it prints for a person. It also
// decides which CRDs a local hub starts with (--hub-crds: a directory's,
// with federator's own for the names it lacks). cmd/federator parses the
// flags into Options and calls Run; the errors here name those flags.
package localfleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/install/crds"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/pkg/hubinstall"
	"github.com/federator-dev/federator/pkg/kindfleet"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

// The providers, what the clusters are (--provider).
const (
	// ProviderLocal: API servers run on this machine, no container engine needed.
	ProviderLocal = "local"
	// ProviderKind: kind clusters in Docker or podman.
	ProviderKind = "kind"
)

// Options are `federator up`'s flags, checked by the command: Members at
// least 1, PullMembers from 0 to Members, Nodes at least 1, Provider one
// of the providers, each provider's fields set only with it.
type Options struct {
	// Members are member1..Members (--members); the last PullMembers of
	// them run in Pull mode, each through its agent (--pull-members).
	Members, PullMembers int
	// Dir holds the kubeconfigs and federator.log (--dir).
	Dir string
	// Sample: apply the sample staged rollout once ready (--sample).
	Sample bool
	// Hub are the controllers' options (the hub flags, --v).
	Hub hub.Options
	// Provider is ProviderLocal or ProviderKind (--provider).
	Provider string

	// With ProviderLocal: where the fleet's binaries are (--bin-dir), and
	// --controller-manager, --workloads, --nodes, --hub-crds (a directory
	// of CRDs the hub starts with), --prometheus.
	BinDir            string
	ControllerManager bool
	Workloads         bool
	Nodes             int
	HubCRDsDir        string
	Prometheus        bool

	// With ProviderKind: --node-image, --kind-prefix, --engine.
	NodeImage  string
	KindPrefix string
	Engine     kindfleet.Engine
}

// state is a Run's Options and what it learns as the fleet starts.
type state struct {
	Options
	// prometheusURL is where the fleet's Prometheus answers; "" when off.
	prometheusURL string
	// dashboardURL is where --dashboard-bind-address serves the page,
	// once it listens; "" when off.
	dashboardURL string
	// kindWorkloads: the kind fleet's members have every
	// kindfleet.WorkloadImages, so the sample runs federator/web there.
	kindWorkloads bool
}

// Run starts the fleet, registers its members, runs the hub's controllers
// (and the Pull members' agents) on it, applies the sample with
// o.Sample, and prints to out the ready line and the walkthrough. It
// returns once ctx ends (nil: Ctrl-C is no error) or something fails, and
// stops everything it started either way; a fleet that cannot start
// leaves nothing.
func Run(ctx context.Context, out io.Writer, opts Options) (err error) {
	began := time.Now()
	o := state{Options: opts}
	// A kind fleet is checked before anything is written: a machine that
	// cannot run it is told so and keeps nothing.
	var kindPlan *kindfleet.Plan
	if o.Provider == ProviderKind {
		kindPlan, err = kindfleet.Check(ctx, kindfleet.Options{Dir: o.Dir, Members: o.Members, NodeImage: o.NodeImage, Prefix: o.KindPrefix, Engine: o.Engine})
		var preflight *kindfleet.PreflightError
		if errors.As(err, &preflight) {
			return fmt.Errorf("--provider kind cannot run on this machine:\n  %s", strings.Join(preflight.Problems, "\n  "))
		}
		if err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("--dir %s: %w", o.Dir, err)
	}
	logFile, err := os.Create(filepath.Join(o.Dir, "federator.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctrl.SetLogger(newLogger(logFile, o.Hub.Verbosity))

	var f fleet.Running
	if kindPlan != nil {
		// Creating kind clusters takes minutes: progress goes to the terminal too.
		var kf *kindfleet.Fleet
		if kf, err = kindPlan.Start(ctx, io.MultiWriter(out, logFile)); err == nil {
			f, o.kindWorkloads = kf, kf.WorkloadImagesLoaded()
		}
	} else {
		// A program of the fleet that dies (and is restarted) is said on the
		// terminal too.
		f, err = startLocalFleet(ctx, o.Options, logFile, prefixed{"federator: ", out})
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, kindfleet.ErrLeftBehind) {
			// Interrupted while starting: Start stopped what it started.
			fmt.Fprintln(out, "federator: interrupted during start-up; everything it started is stopped")
			return nil
		}
		return err
	}
	defer func() {
		if stopErr := f.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		fmt.Fprintln(out, "federator: fleet stopped")
	}()
	hubEndpoint, memberEndpoints := f.Endpoints()
	if local, ok := f.(*fleet.Fleet); ok {
		o.prometheusURL = local.PrometheusURL()
	}

	hubClient, err := client.New(hubEndpoint.Config, client.Options{Scheme: policy.NewScheme()})
	if err != nil {
		return err
	}
	if kindPlan != nil {
		// The local fleet starts its hub with the CRDs; a kind hub gets
		// them now, before members are registered as Clusters.
		if _, err := hubinstall.Install(ctx, hubClient); err != nil {
			return fmt.Errorf("kind hub: %w", err)
		}
	}
	push, pull := memberEndpoints[:len(memberEndpoints)-o.PullMembers], memberEndpoints[len(memberEndpoints)-o.PullMembers:]
	for _, m := range push {
		if err := membership.Register(ctx, hubClient, m.Name, m.Config); err != nil {
			return err
		}
	}
	// Each Pull member registers itself, through its agent.
	agents, err := startPullAgents(ctx, hubClient, hubEndpoint.Config, pull, o.Hub.ClusterStatusInterval)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, agents.stop()) }()

	// The dashboard listens before the controllers start, so its URL is
	// known by the time the ready line is printed.
	o.Hub.DashboardListening = func(url string) { o.dashboardURL = url }
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	readyErr := make(chan error, 1)
	runErr := make(chan error, 1)
	go func() {
		runErr <- hub.Run(runCtx, hubEndpoint.Config, o.Hub, func() {
			if o.Sample {
				if err := yamldocs.Apply(runCtx, hubClient, o.sampleRollout(), client.FieldOwner("federator-sample")); err != nil {
					readyErr <- fmt.Errorf("apply the sample rollout: %w", err)
					return
				}
				if o.staged() {
					if err := applySampleStages(runCtx, hubClient, o.prometheusURL); err != nil {
						readyErr <- err
						return
					}
				}
			}
			printReady(out, f, o, time.Since(began))
		})
	}()
	select {
	case <-ctx.Done():
		cancel()
		return <-runErr
	case err := <-readyErr:
		cancel()
		return errors.Join(err, <-runErr)
	case err := <-runErr:
		return err
	}
}

// newLogger logs JSON lines to w at the verbosity --v asks for, as
// `federator controller` does without zap's flags.
func newLogger(w io.Writer, verbosity int) logr.Logger {
	return zap.New(zap.WriteTo(w), zap.Level(zapcore.Level(-verbosity)))
}

// prefixed writes each write's text after prefix.
type prefixed struct {
	prefix string
	w      io.Writer
}

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// startLocalFleet starts API servers on this machine, with the CRDs
// installed as they start.
func startLocalFleet(ctx context.Context, o Options, log, alerts io.Writer) (fleet.Running, error) {
	crdList, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	if o.HubCRDsDir != "" {
		if crdList, err = hubCRDs(o.HubCRDsDir, crdList); err != nil {
			return nil, err
		}
	}
	f, err := fleet.Start(ctx, fleet.Options{Dir: o.Dir, Members: o.Members, BinDir: o.BinDir, CRDs: crdList,
		ControllerManager: o.ControllerManager, Workloads: o.Workloads, Nodes: o.Nodes, Prometheus: o.Prometheus, Log: log, Alerts: alerts})
	if err != nil {
		return nil, err // not a nil *fleet.Fleet in a non-nil interface
	}
	return f, nil
}
