package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/federator-dev/federator/pkg/hub"
)

func addHubFlags(fs *pflag.FlagSet, o *hub.Options) {
	fs.Float32Var(&o.HubQPS, "hub-qps", o.HubQPS, "queries per second to the hub API server")
	fs.IntVar(&o.HubBurst, "hub-burst", o.HubBurst, "burst of queries to the hub API server")
	fs.Float32Var(&o.Member.QPS, "member-qps", o.Member.QPS, "queries per second to each member API server")
	fs.IntVar(&o.Member.Burst, "member-burst", o.Member.Burst, "burst of queries to each member API server")
	fs.IntVar(&o.Workers, "workers", o.Workers, "concurrent reconciles per controller")
	fs.DurationVar(&o.ClusterStatusInterval, "cluster-status-interval", o.ClusterStatusInterval, "how often member health is probed")
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
	fs.IntVar(&o.Verbosity, "v", o.Verbosity, "log verbosity: 1 logs one line per reconcile outcome (held and why, applied, unchanged, deleted)")
}

// newLogger logs JSON lines to w at the verbosity --v asks for.
func newLogger(w io.Writer, verbosity int) logr.Logger {
	return zap.New(zap.WriteTo(w), zap.Level(zapcore.Level(-verbosity)))
}

func newControllerCommand() *cobra.Command {
	o := hub.DefaultOptions()
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "controller --kubeconfig HUB",
		Short: "Run federator's controllers against an existing hub; members come from its Cluster objects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kubeconfig == "" {
				return fmt.Errorf("--kubeconfig is required: the hub's kubeconfig file")
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
			}
			ctrl.SetLogger(newLogger(os.Stderr, o.Verbosity))
			return hub.Run(cmd.Context(), cfg, o, func() {
				fmt.Fprintf(cmd.OutOrStdout(), "federator: controllers running against %s\n", cfg.Host)
			})
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the hub")
	addHubFlags(cmd.Flags(), &o)
	return cmd
}
