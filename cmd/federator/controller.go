package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/federator-dev/federator/internal/clidoc"
	"github.com/federator-dev/federator/pkg/hub"
)

func addHubFlags(fs *pflag.FlagSet, o *hub.Options) {
	fs.Float32Var(&o.HubQPS, "hub-qps", o.HubQPS, "queries per second to the hub API server")
	fs.IntVar(&o.HubBurst, "hub-burst", o.HubBurst, "burst of queries to the hub API server")
	fs.IntVar(&o.HubBulkWrites, "hub-bulk-writes", o.HubBulkWrites, "writes to the hub in flight at once that change no hold (0: no bound); writes that hold or release a cluster are never bounded")
	fs.IntVar(&o.EventQueueLimit, "event-queue-limit", o.EventQueueLimit, "Events waiting to be written to the hub, per each of the 16 recorder shards, before more are dropped and counted in federator_events_dropped_total (0: no queue, client-go's recorder alone, which drops what does not fit its 1,000)")
	fs.Float32Var(&o.Member.QPS, "member-qps", o.Member.QPS, "queries per second to each member API server")
	fs.IntVar(&o.Member.Burst, "member-burst", o.Member.Burst, "burst of queries to each member API server")
	fs.IntVar(&o.Workers, "workers", o.Workers, "concurrent reconciles per controller")
	fs.DurationVar(&o.ClusterStatusInterval, "cluster-status-interval", o.ClusterStatusInterval, "how often member health is probed")
	fs.DurationVar(&o.ClusterMonitorGracePeriod, "cluster-monitor-grace-period", o.ClusterMonitorGracePeriod,
		"Specifies the grace period of allowing a running cluster to be unresponsive before marking it unhealthy: a Pull cluster whose agent neither renews its Lease nor writes its status for this long is Ready=Unknown")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, `address serving Prometheus metrics ("0" disables)`)
	fs.StringVar(&o.WebhookAddr, "webhook-bind-address", o.WebhookAddr,
		`address serving the gate webhook receiver, POST /hooks/gates/{namespace}/{name}/open|close ("0" disables)`)
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf(
		"controllers to run: '*' runs all, 'name' enables one, '-name' disables one; names: %s",
		strings.Join(hub.ControllerNames(), ", ")))
	fs.DurationVar(&o.MaxDeletionDelay, "max-deletion-delay", o.MaxDeletionDelay,
		"longest deletion countdown: a federator.dev/deletion-delay above it is capped to it, and the binding says so")
	// Karmada's profiling flags (pkg/sharedcli/profileflag), strings and all.
	fs.BoolVar(&o.EnablePprof, "enable-pprof", o.EnablePprof, "Enable profiling via web interface host:port/debug/pprof/.")
	fs.StringVar(&o.ProfilingBindAddress, "profiling-bind-address", o.ProfilingBindAddress,
		"The TCP address for serving profiling(e.g. 127.0.0.1:6060, :6060). This is only applicable if profiling is enabled.")
	fs.StringVar(&o.DashboardAddr, "dashboard-bind-address", o.DashboardAddr,
		`address serving the read-only dashboard (docs/dashboard.md) from the controllers' cache, on every replica ("" or "0" disables; a host left out, ":8090", is 127.0.0.1)`)
	fs.IntVar(&o.Verbosity, "v", o.Verbosity, "log verbosity: 1 logs one line per reconcile outcome (held and why, applied, unchanged, deleted)")
}

// newFlagLogger logs JSON lines to w at the verbosity --v asks for, as
// zap's flags (--zap-log-level, --zap-encoder, ...) change it;
// --zap-log-level wins over --v. (`federator up` logs to its
// federator.log as this does without zap's flags: pkg/localfleet.)
func newFlagLogger(w io.Writer, verbosity int, flags *zap.Options) logr.Logger {
	opts := []zap.Opts{zap.UseFlagOptions(flags), zap.WriteTo(w)}
	if flags.Level == nil {
		opts = append(opts, zap.Level(zapcore.Level(-verbosity)))
	}
	return zap.New(opts...)
}

func newControllerCommand() *cobra.Command {
	o := hub.DefaultOptions()
	o.LeaderElection = true
	o.LeaderElectionNamespace = ownNamespace()
	o.MetricsAddr, o.HealthProbeAddr = "", ""
	var kubeconfig string
	zapOptions := zap.Options{}
	cmd := &cobra.Command{
		Use:   "controller [--kubeconfig HUB]",
		Short: "Run federator's controllers against a hub (in-cluster unless --kubeconfig); members come from its Cluster objects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := hubConfig(kubeconfig)
			if err != nil {
				return err
			}
			// In a cluster, metrics and probes are served unless told not to;
			// beside a hub (--kubeconfig), where other programs and replicas
			// share the host's ports, only when asked.
			inCluster := kubeconfig == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != ""
			o.MetricsAddr = orDefault(o.MetricsAddr, inCluster, ":8080")
			o.HealthProbeAddr = orDefault(o.HealthProbeAddr, inCluster, ":8081")
			ctrl.SetLogger(newFlagLogger(os.Stderr, o.Verbosity, &zapOptions))
			return hub.Run(cmd.Context(), cfg, o, func() {
				fmt.Fprintf(cmd.OutOrStdout(), "federator: controllers running against %s\n", cfg.Host)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG, else the in-cluster config, else ~/.kube/config)")
	addHubFlags(f, &o)
	// Defaults that depend on where it runs: said in the help, decided in RunE.
	f.Lookup("metrics-bind-address").Usage = `address serving Prometheus metrics ("0" disables; default ":8080" in a cluster, "0" with --kubeconfig)`
	f.StringVar(&o.HealthProbeAddr, "health-probe-bind-address", o.HealthProbeAddr,
		`address serving /healthz and /readyz ("0" disables; default ":8081" in a cluster, "0" with --kubeconfig)`)
	f.BoolVar(&o.LeaderElection, "leader-elect", o.LeaderElection,
		"run controllers only while holding the Lease "+hub.LeaderElectionID+", so that replicas take turns; released on SIGTERM")
	f.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		"namespace of the Lease, created if missing; defaults to $POD_NAMESPACE, else the in-cluster namespace, else "+hub.Namespace)
	clidoc.DocumentDefault(f, "leader-election-namespace", hub.Namespace)
	f.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"how long a standby waits after the leader's last renewal before taking the Lease")
	f.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"how long the leader keeps trying to renew before it stops leading (and exits)")
	f.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often replicas try to take or renew the Lease")
	f.BoolVar(&o.InstallCRDs, "install-crds", o.InstallCRDs,
		"install or update the CRDs and admission policies on the hub at start; false where federator's manifests installed them "+
			"(federator install): the controller then only checks they are served, and needs no right to change CRDs")
	addZapFlags(f, &zapOptions)
	return cmd
}

// addZapFlags adds controller-runtime's zap flags (--zap-log-level,
// --zap-encoder, --zap-devel, ...), which set o.
func addZapFlags(fs *pflag.FlagSet, o *zap.Options) {
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.BindFlags(zapFlags)
	fs.AddGoFlagSet(zapFlags)
}

// hubConfig is the hub's config: from kubeconfig if given, else as
// controller-runtime finds one ($KUBECONFIG, in-cluster, ~/.kube/config).
func hubConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no hub to run against: not in a cluster and no kubeconfig found; give --kubeconfig the hub's kubeconfig file: %w", err)
	}
	return cfg, nil
}

// serviceAccountNamespace is where Kubernetes tells a pod its namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ownNamespace is the namespace the controller runs in: $POD_NAMESPACE
// (the downward API), else its service account's, else federator-system.
func ownNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return hub.Namespace
}

// orDefault is addr, or when not given, inCluster's default, else "0".
func orDefault(addr string, inCluster bool, inClusterDefault string) string {
	switch {
	case addr != "":
		return addr
	case inCluster:
		return inClusterDefault
	}
	return "0"
}
