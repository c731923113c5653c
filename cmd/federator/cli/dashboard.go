package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/pkg/dashboard"
)

// syncTimeout bounds the dashboard's wait for its first lists of the hub:
// a list that never succeeds (RBAC, a missing CRD) says so instead of
// hanging.
const syncTimeout = time.Minute

// newDashboardCommand is `federator dashboard`: the read-only page, over
// informers of the hub the connection flags name.
func newDashboardCommand(config func(connection) (*rest.Config, kubeconfigChoice, error)) *cobra.Command {
	var conn connection
	addr := dashboard.DefaultBindAddress
	cmd := &cobra.Command{
		Use:   "dashboard [--bind-address " + dashboard.DefaultBindAddress + "]",
		Short: "Serve a live, read-only web page of the fleet: each template's state on each cluster and why, Rollouts, Gates, deletions, clusters",
		Long: `Serve a live, read-only web page of the fleet until interrupted (Ctrl-C).

The page shows every propagated template on every cluster (Applied, Held,
Pending, Failed, Deleting, Progressing, RolledBack, with the reason and the
holder's message), Rollouts and their stages, Gates, running deletion
countdowns and the member clusters. It reads the hub through informers
(one watch per kind, not one request per view) and updates itself within a
second of the hub changing. It changes nothing: it serves GET only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, choice, err := config(conn)
			if err != nil {
				return err
			}
			return runDashboard(cmd.Context(), cfg, addr, func(url string) {
				fmt.Fprintf(cmd.OutOrStdout(), "federator dashboard: %s\nhub %s, kubeconfig %s; read-only; Ctrl-C stops it\n", url, cfg.Host, choice)
			})
		},
	}
	f := cmd.Flags()
	conn.addFlags(f, false)
	// The page shows every namespace; -n has nothing to select.
	_ = f.MarkHidden("namespace")
	f.StringVar(&addr, "bind-address", addr, "address the page is served on (HOST:PORT; port 0 picks a free one)")
	return cmd
}

// runDashboard serves the dashboard of the hub at cfg until ctx ends.
func runDashboard(ctx context.Context, cfg *rest.Config, addr string, ready func(url string)) error {
	cfg = rest.CopyConfig(cfg)
	// Lists and watches only: a few requests, once.
	cfg.QPS, cfg.Burst = 50, 100
	hubCache, err := cache.New(cfg, cache.Options{Scheme: policy.NewScheme(),
		DefaultTransform: cache.TransformStripManagedFields(),
		// Of the hub's ConfigMaps only the deletion tombstones.
		ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
			Label: labels.SelectorFromSet(labels.Set{workkeys.TombstoneLabel: "true"})}}})
	if err != nil {
		return fmt.Errorf("hub %s: %w", cfg.Host, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d := dashboard.New(dashboard.Source{Hub: hubCache, Tombstones: hubCache}, dashboard.Options{})
	if err := d.Watch(ctx, hubCache, hubCache); err != nil {
		return fmt.Errorf("hub %s: %w", cfg.Host, err)
	}
	started := make(chan error, 1)
	go func() { started <- hubCache.Start(ctx) }()
	syncCtx, stop := context.WithTimeout(ctx, syncTimeout)
	defer stop()
	if !hubCache.WaitForCacheSync(syncCtx) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("hub %s: could not list Clusters, bindings, Works, Rollouts, Gates and tombstone ConfigMaps within %v: "+
			"is federator installed there and may this kubeconfig list and watch them?", cfg.Host, syncTimeout)
	}
	l, url, err := dashboard.Listen(addr)
	if err != nil {
		return fmt.Errorf("--bind-address %s: %w", addr, err)
	}
	ready(url)
	return dashboard.Serve(ctx, l, d)
}
