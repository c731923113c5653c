package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/install/crds"
	"github.com/federator-dev/federator/config/samples"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/pkg/kindfleet"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

func newUpCommand() *cobra.Command {
	o := hub.DefaultOptions()
	var (
		members           int
		pullMembers       int
		dir, binDir       string
		sample            bool
		controllerManager bool
		workloads         bool
		nodes             int
		provider          string
		nodeImage         string
		kindPrefix        string
		engine            string
		hubCRDsDir        string
		prometheus        bool
	)
	cmd := &cobra.Command{
		Use:   "up --members N --dir DIR",
		Short: "Start a local fleet (a hub and N member clusters of real API servers) and run the controllers",
		Long: `Start a hub and members member1..N, each a real kube-apiserver + etcd, register the
members as Karmada Clusters, run federator's controllers, and write DIR/hub.kubeconfig,
DIR/member1.kubeconfig, ... Stops everything it started on SIGINT or SIGTERM.

With --provider kind the hub and members are kind clusters (containers running real
nodes) named PREFIX-hub, PREFIX-member1, ..., in Docker where it starts privileged
containers, else in podman (--engine); it first checks what that engine needs (for
podman: its rlimits in containers.conf, inotify instances, the node image) and says
what to run for each piece that is missing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if members < 1 {
				return fmt.Errorf("--members is %d: a fleet needs at least one member", members)
			}
			if pullMembers < 0 || pullMembers > members {
				return fmt.Errorf("--pull-members is %d: it counts the last of the %d members (--members) that run in Pull mode, from 0 to %d",
					pullMembers, members, members)
			}
			if binDir == "" {
				binDir = os.Getenv("KUBEBUILDER_ASSETS")
			}
			if binDir == "" {
				binDir = "bin"
			}
			if nodes < 1 {
				return fmt.Errorf("--nodes is %d: a member that runs workloads needs at least one node", nodes)
			}
			if err := flagsOfProvider(cmd.Flags(), provider); err != nil {
				return err
			}
			kindEngine, err := kindfleet.ParseEngine(engine)
			if err != nil {
				return err
			}
			return up(cmd.Context(), cmd.OutOrStdout(), upOptions{members: members, pullMembers: pullMembers, dir: dir, binDir: binDir,
				sample: sample, controllerManager: controllerManager, workloads: workloads, nodes: nodes, hub: o,
				provider: provider, nodeImage: nodeImage, kindPrefix: kindPrefix, engine: kindEngine, hubCRDsDir: hubCRDsDir,
				prometheus: prometheus})
		},
	}
	f := cmd.Flags()
	f.IntVar(&members, "members", 3, "number of member clusters (member1..N)")
	f.IntVar(&pullMembers, "pull-members", 0, "how many of the members, the last ones, are Pull members: each registers itself and applies its Works "+
		"through its own agent (federator agent, run here as it would run in the member); the hub never writes to them (docs/pull-mode.md)")
	f.StringVar(&dir, "dir", ".fleet", "directory for hub.kubeconfig, member1.kubeconfig, ... and federator.log")
	f.StringVar(&binDir, "bin-dir", "", "directory holding kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok (default $KUBEBUILDER_ASSETS, else ./bin; 'make binaries' builds them)")
	f.BoolVar(&sample, "sample", false, "apply a sample staged rollout (namespace demo, Deployment web) once ready")
	f.BoolVar(&controllerManager, "controller-manager", true, "run kube-controller-manager in every cluster: on the hub the namespace, garbage-collector and serviceaccount-token controllers only; in members also the service-account and workload controllers")
	f.BoolVar(&workloads, "workloads", true, "members run pods: kube-scheduler and simulated nodes (kwok), so Deployments become Available; false gives bare API servers")
	f.IntVar(&nodes, "nodes", fleet.DefaultNodes, "simulated nodes per member with --workloads, each with 4 CPUs, 8Gi memory and 110 pods allocatable")
	f.StringVar(&provider, "provider", providerLocal, "what the clusters are: local (API servers run here, no container engine needed) or kind (kind clusters in Docker or podman)")
	f.StringVar(&engine, "engine", string(kindfleet.EngineAuto), "with --provider kind: the container engine of the nodes: auto (Docker where it starts privileged containers, else podman where installed), docker or podman")
	f.StringVar(&nodeImage, "node-image", "", "with --provider kind: the kind node image (default "+kindfleet.LocalNodeImage+" if present locally (podman: localhost/"+kindfleet.LocalNodeImage+", copied from Docker if only Docker has it), else kind's default "+kindfleet.DefaultKindImage+")")
	f.StringVar(&kindPrefix, "kind-prefix", kindfleet.DefaultPrefix, "with --provider kind: the kind clusters' names start with it (PREFIX-hub, PREFIX-member1, ...), so fleets with different prefixes coexist")
	f.StringVar(&hubCRDsDir, "hub-crds", "", "start the hub with the CustomResourceDefinitions in this directory's YAML files (e.g. Karmada's charts/karmada/_crds/bases, as a Karmada hub has them) instead of federator's of the same names, before the controllers start")
	f.BoolVar(&prometheus, "prometheus", false, "run Debian's prometheus (apt-get install prometheus) beside the fleet, scraping every second the request metrics "+
		"a stand-in application serves for each member's Deployments, steered per version by the ConfigMap federator-system/federator-fleet-metrics in each member "+
		"(docs/local-fleet.md); its URL is printed and written to DIR/prometheus.url")
	addHubFlags(f, &o)
	return cmd
}

type upOptions struct {
	members           int
	pullMembers       int
	dir, binDir       string
	sample            bool
	controllerManager bool
	workloads         bool
	nodes             int
	hub               hub.Options
	provider          string
	nodeImage         string
	kindPrefix        string
	engine            kindfleet.Engine
	hubCRDsDir        string
	prometheus        bool
	// prometheusURL is where the fleet's Prometheus answers; "" when off.
	prometheusURL string
	// dashboardURL is where --dashboard-bind-address serves the page,
	// once it listens; "" when off.
	dashboardURL string
	// kindWorkloads: the kind fleet's members have every
	// kindfleet.WorkloadImages, so the sample runs federator/web there.
	kindWorkloads bool
}

const (
	providerLocal = "local"
	providerKind  = "kind"
)

// localOnlyFlags and kindOnlyFlags mean nothing to the other provider; set
// there, they are refused rather than silently ignored.
var (
	localOnlyFlags = []string{"bin-dir", "controller-manager", "workloads", "nodes", "hub-crds", "prometheus"}
	kindOnlyFlags  = []string{"node-image", "kind-prefix", "engine"}
)

func flagsOfProvider(flags *pflag.FlagSet, provider string) error {
	var foreign []string
	switch provider {
	case providerLocal:
		foreign = kindOnlyFlags
	case providerKind:
		foreign = localOnlyFlags
	default:
		return fmt.Errorf("--provider %q: use %s (no container engine needed) or %s", provider, providerLocal, providerKind)
	}
	for _, name := range foreign {
		if flags.Changed(name) {
			return fmt.Errorf("--%s does not apply to --provider %s", name, provider)
		}
	}
	return nil
}

func up(ctx context.Context, out io.Writer, o upOptions) (err error) {
	began := time.Now()
	// A kind fleet is checked before anything is written: a machine that
	// cannot run it is told so and keeps nothing.
	var kindPlan *kindfleet.Plan
	if o.provider == providerKind {
		kindPlan, err = kindfleet.Check(ctx, kindfleet.Options{Dir: o.dir, Members: o.members, NodeImage: o.nodeImage, Prefix: o.kindPrefix, Engine: o.engine})
		var preflight *kindfleet.PreflightError
		if errors.As(err, &preflight) {
			return fmt.Errorf("--provider kind cannot run on this machine:\n  %s", strings.Join(preflight.Problems, "\n  "))
		}
		if err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("--dir %s: %w", o.dir, err)
	}
	logFile, err := os.Create(filepath.Join(o.dir, "federator.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctrl.SetLogger(newLogger(logFile, o.hub.Verbosity))

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
		f, err = startLocalFleet(ctx, o, logFile, prefixed{"federator: ", out})
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
		if _, err := hub.Install(ctx, hubClient); err != nil {
			return fmt.Errorf("kind hub: %w", err)
		}
	}
	push, pull := memberEndpoints[:len(memberEndpoints)-o.pullMembers], memberEndpoints[len(memberEndpoints)-o.pullMembers:]
	for _, m := range push {
		if err := membership.Register(ctx, hubClient, m.Name, m.Config); err != nil {
			return err
		}
	}
	// Each Pull member registers itself, through its agent.
	agents, err := startPullAgents(ctx, hubClient, hubEndpoint.Config, pull, o.hub.ClusterStatusInterval)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, agents.stop()) }()

	// The dashboard listens before the controllers start, so its URL is
	// known by the time the ready line is printed.
	o.hub.DashboardListening = func(url string) { o.dashboardURL = url }
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	readyErr := make(chan error, 1)
	runErr := make(chan error, 1)
	go func() {
		runErr <- hub.Run(runCtx, hubEndpoint.Config, o.hub, func() {
			if o.sample {
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

// applySampleStages applies the sample's Rollout; with the fleet's
// Prometheus at prometheusURL (--prometheus), its canary stage is judged
// by an analysis too.
func applySampleStages(ctx context.Context, hub client.Client, prometheusURL string) error {
	rollout := samples.Stages
	if prometheusURL != "" {
		var err error
		if rollout, err = samples.StagesWithAnalysis(prometheusURL); err != nil {
			return err
		}
	}
	if err := yamldocs.Apply(ctx, hub, rollout, client.FieldOwner("federator-sample")); err != nil {
		return fmt.Errorf("apply the sample's Rollout: %w", err)
	}
	return nil
}

// staged says whether the sample comes with its Rollout: where members run
// workloads, so versions become healthy (or, tagged -broken, never do):
// in simulated nodes, or in kind nodes that have the workload images.
// Bare members, and kind members without those images, get the steps by hand.
func (o upOptions) staged() bool {
	return o.workloads && (o.provider != providerKind || o.kindWorkloads)
}

// image is the sample's image of tag: nginx, or federator/web where kind
// nodes run it for real.
func (o upOptions) image(tag string) string {
	if o.provider == providerKind && o.kindWorkloads {
		return kindfleet.WebRepository + ":" + tag
	}
	return "nginx:" + tag
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
func startLocalFleet(ctx context.Context, o upOptions, log, alerts io.Writer) (fleet.Running, error) {
	crdList, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	if o.hubCRDsDir != "" {
		if crdList, err = hubCRDs(o.hubCRDsDir, crdList); err != nil {
			return nil, err
		}
	}
	f, err := fleet.Start(ctx, fleet.Options{Dir: o.dir, Members: o.members, BinDir: o.binDir, CRDs: crdList,
		ControllerManager: o.controllerManager, Workloads: o.workloads, Nodes: o.nodes, Prometheus: o.prometheus, Log: log, Alerts: alerts})
	if err != nil {
		return nil, err // not a nil *fleet.Fleet in a non-nil interface
	}
	return f, nil
}
