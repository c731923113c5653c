package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/pkg/kindfleet"
	"github.com/federator-dev/federator/pkg/localfleet"
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
			return localfleet.Run(cmd.Context(), cmd.OutOrStdout(), localfleet.Options{Members: members, PullMembers: pullMembers, Dir: dir,
				Sample: sample, Hub: o, Provider: provider,
				BinDir: binDir, ControllerManager: controllerManager, Workloads: workloads, Nodes: nodes, HubCRDsDir: hubCRDsDir, Prometheus: prometheus,
				NodeImage: nodeImage, KindPrefix: kindPrefix, Engine: kindEngine})
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
	f.StringVar(&provider, "provider", localfleet.ProviderLocal, "what the clusters are: local (API servers run here, no container engine needed) or kind (kind clusters in Docker or podman)")
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

// localOnlyFlags and kindOnlyFlags mean nothing to the other provider; set
// there, they are refused rather than silently ignored.
var (
	localOnlyFlags = []string{"bin-dir", "controller-manager", "workloads", "nodes", "hub-crds", "prometheus"}
	kindOnlyFlags  = []string{"node-image", "kind-prefix", "engine"}
)

func flagsOfProvider(flags *pflag.FlagSet, provider string) error {
	var foreign []string
	switch provider {
	case localfleet.ProviderLocal:
		foreign = kindOnlyFlags
	case localfleet.ProviderKind:
		foreign = localOnlyFlags
	default:
		return fmt.Errorf("--provider %q: use %s (no container engine needed) or %s", provider, localfleet.ProviderLocal, localfleet.ProviderKind)
	}
	for _, name := range foreign {
		if flags.Changed(name) {
			return fmt.Errorf("--%s does not apply to --provider %s", name, provider)
		}
	}
	return nil
}
