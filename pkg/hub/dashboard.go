package hub

import (
	"context"
	"fmt"
	"net"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/pkg/dashboard"
)

// DashboardAddr is where the dashboard listens for --dashboard-bind-address
// addr: "" when off ("" or "0"), and a host left out is localhost, so the
// page is reachable from elsewhere only when asked ("0.0.0.0:8090").
func DashboardAddr(addr string) string {
	if addr == "" || addr == "0" {
		return ""
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// addDashboard serves the dashboard from the manager's own cache when
// o.DashboardAddr says so. It reads only, so every replica serves it.
func addDashboard(mgr ctrl.Manager, o Options) error {
	addr := DashboardAddr(o.DashboardAddr)
	if addr == "" {
		return nil
	}
	tombstones, err := countdown.NewCache(mgr, "")
	if err != nil {
		return err
	}
	l, url, err := dashboard.Listen(addr)
	if err != nil {
		return fmt.Errorf("--dashboard-bind-address %s: %w", o.DashboardAddr, err)
	}
	if o.DashboardListening != nil {
		o.DashboardListening(url)
	}
	d := dashboard.New(dashboard.Source{Hub: mgr.GetCache(), Tombstones: tombstones},
		dashboard.Options{MaxDeletionDelay: o.MaxDeletionDelay})
	return mgr.Add(everyReplica(func(ctx context.Context) error {
		defer l.Close()
		if err := d.Watch(ctx, mgr.GetCache(), tombstones); err != nil {
			return err
		}
		ctrl.Log.WithName("dashboard").Info("serving the dashboard", "url", url)
		return dashboard.Serve(ctx, l, d)
	}))
}

// everyReplica is a runnable that runs whether or not this replica leads.
type everyReplica func(context.Context) error

func (r everyReplica) Start(ctx context.Context) error { return r(ctx) }
func (everyReplica) NeedLeaderElection() bool          { return false }
