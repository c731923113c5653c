package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/federator-dev/federator/pkg/agent"
)

func newAgentCommand() *cobra.Command {
	o := agent.DefaultOptions()
	var hubKubeconfig, hubContext, memberKubeconfig string
	verbosity := 0
	zapOptions := zap.Options{}
	cmd := &cobra.Command{
		Use: "agent --cluster-name NAME --karmada-kubeconfig HUB [--kubeconfig MEMBER]",
		Short: "Serve one member cluster in Pull mode, from inside it: register it with the hub, apply its Works, keep its status " +
			"(docs/pull-mode.md)",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hubKubeconfig == "" {
				return fmt.Errorf("--karmada-kubeconfig is required: the kubeconfig of the hub the agent pulls the Works of cluster %q from", o.ClusterName)
			}
			hub, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
				&clientcmd.ClientConfigLoadingRules{ExplicitPath: hubKubeconfig},
				&clientcmd.ConfigOverrides{CurrentContext: hubContext}).ClientConfig()
			if err != nil {
				return fmt.Errorf("--karmada-kubeconfig %s: %w", hubKubeconfig, err)
			}
			member, err := memberAgentConfig(memberKubeconfig)
			if err != nil {
				return err
			}
			o.Hub, o.Member = hub, member
			inCluster := memberKubeconfig == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != ""
			// Karmada's agent's ports in a cluster; beside a fleet only when asked.
			o.MetricsAddr = orDefault(o.MetricsAddr, inCluster, ":8080")
			o.HealthProbeAddr = orDefault(o.HealthProbeAddr, inCluster, ":10357")
			ctrl.SetLogger(newFlagLogger(os.Stderr, verbosity, &zapOptions))
			return agent.Run(cmd.Context(), o, func() {
				fmt.Fprintf(cmd.OutOrStdout(), "federator: agent of cluster %s running against hub %s\n", o.ClusterName, hub.Host)
			})
		},
	}
	o.MetricsAddr, o.HealthProbeAddr = "", ""
	f := cmd.Flags()
	// Karmada's karmada-agent's flag names and meanings.
	f.StringVar(&o.ClusterName, "cluster-name", "", "Name of member cluster that the agent serves for.")
	f.StringVar(&hubKubeconfig, "karmada-kubeconfig", "", "Path to karmada control plane kubeconfig file.")
	f.StringVar(&hubContext, "karmada-context", "", "Name of the cluster context in karmada control plane kubeconfig file.")
	f.StringVar(&o.ClusterAPIEndpoint, "cluster-api-endpoint", "", "APIEndpoint of the cluster (default: the member kubeconfig's server).")
	f.DurationVar(&o.ClusterStatusUpdateFrequency, "cluster-status-update-frequency", o.ClusterStatusUpdateFrequency,
		"Specifies how often the agent posts cluster status to the hub.")
	f.DurationVar(&o.ClusterLeaseDuration, "cluster-lease-duration", o.ClusterLeaseDuration,
		"Specifies the expiration period of a cluster lease.")
	f.Float64Var(&o.ClusterLeaseRenewIntervalFraction, "cluster-lease-renew-interval-fraction", o.ClusterLeaseRenewIntervalFraction,
		"Specifies the cluster lease renew interval fraction.")
	f.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"take turns with the other agents of this cluster by a Lease in the member, so that one writes at a time")
	f.StringVar(&o.LeaderElectionNamespace, "leader-elect-resource-namespace", o.LeaderElectionNamespace,
		"namespace, in the member, of the Lease the agents of this cluster take turns by (created if missing)")
	f.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration,
		"how long a standby agent waits after the leader's last renewal before taking the Lease")
	f.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline,
		"how long the leading agent keeps trying to renew before it stops leading (and exits)")
	f.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "how often agents try to take or renew the Lease")
	f.StringVar(&o.MetricsAddr, "metrics-bind-address", "",
		`address serving Prometheus metrics ("0" disables; default ":8080" in a cluster, "0" with --kubeconfig)`)
	f.StringVar(&o.HealthProbeAddr, "health-probe-bind-address", "",
		`address serving /healthz and /readyz, which fails while the hub cannot be watched ("0" disables; default ":10357" in a cluster, "0" with --kubeconfig)`)
	f.Float32Var(&o.MemberClient.QPS, "cluster-api-qps", o.MemberClient.QPS, "QPS to use while talking with cluster kube-apiserver.")
	f.IntVar(&o.MemberClient.Burst, "cluster-api-burst", o.MemberClient.Burst, "Burst to use while talking with cluster kube-apiserver.")
	f.StringVar(&memberKubeconfig, "kubeconfig", "", "kubeconfig of the member cluster the agent serves (default: the in-cluster config)")
	f.IntVar(&verbosity, "v", 0, "log verbosity: 1 logs one line per reconcile outcome")
	addZapFlags(f, &zapOptions)
	return cmd
}

// memberAgentConfig is the config of the cluster the agent runs in: from
// kubeconfig if given, else in-cluster.
func memberAgentConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("no member cluster: not running in a cluster; give --kubeconfig the kubeconfig of the member this agent serves: %w", err)
	}
	return cfg, nil
}
