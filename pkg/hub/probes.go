package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/federator-dev/federator/internal/startup"
)

// Namespace is where federator runs in a cluster, and where replicas
// hold their Lease unless told otherwise.
const Namespace = "federator-system"

// cacheSyncWait bounds how long a /readyz request waits for the caches:
// under a probe's default one-second timeout.
const cacheSyncWait = 500 * time.Millisecond

// addProbes serves /healthz (the process answers) and /readyz: ready once
// the hub caches have synced, those of the controllers too on the leader,
// whose controllers add their informers as they start. The dispatcher adds
// its own check, member-clients (pkg/dispatch).
func addProbes(mgr ctrl.Manager) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("hub-caches", cachesSynced(mgr.GetCache()))
}

// cachesSynced fails until every informer of c has synced, including those
// added after it started; a cache not started yet has not synced.
func cachesSynced(c cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), cacheSyncWait)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the hub caches have not synced yet")
		}
		return nil
	}
}

// ensureNamespace creates the namespace of the Lease when the hub has none,
// as out of a cluster (`federator controller --kubeconfig`) it may not. A
// controller not allowed to read namespaces is told nothing: its Lease
// namespace is its own.
func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	if err := startup.EnsureNamespace(ctx, c, name); err != nil {
		return fmt.Errorf("namespace %s, for the leader election Lease %s: %w; create it, or name another with --leader-election-namespace",
			name, LeaderElectionID, err)
	}
	return nil
}

func nonZero(d time.Duration) *time.Duration {
	if d == 0 {
		return nil
	}
	return &d
}
