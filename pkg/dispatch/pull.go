package dispatch

import (
	"context"
	"errors"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// PullOptions are what the Work controller of one Pull cluster needs when
// it runs in that cluster's agent (pkg/agent).
type PullOptions struct {
	// Cluster is the Pull cluster whose execution namespace it serves.
	Cluster string
	// Members reaches that one member, from inside it; its guard checks
	// the Freezes before each write, as the hub's does.
	Members *Members
	// HubCaches, when set, says whether the agent's hub caches watch the
	// hub: nothing is written to the member from a cache that may be
	// behind a hold.
	HubCaches HubCaches
}

// SetupPullWithManager runs, while mgr leads, the Work controller of one
// Pull cluster: the controller the hub runs for each Push cluster, with
// its holds, conflict resolution, deletion countdowns, member watch and
// Work status, fed by mgr's hub caches (which need hold only that
// cluster's execution namespace, its Cluster and the Freezes). It decides
// no hold: the hub's controllers wrote them into the Works, and each pass
// confirms its Work against the hub before it writes (confirmWork).
func SetupPullWithManager(mgr ctrl.Manager, o PullOptions) error {
	if o.Cluster == "" || o.Members == nil {
		return errors.New("dispatch: a Pull cluster's Work controller needs its cluster name and a member client")
	}
	// A RunnableFunc needs leader election: two agents of one cluster
	// never both write to it.
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		m, err := startMember(ctx, mgr, o.Members, o.Cluster, gates{hubCaches: o.HubCaches})
		if err != nil {
			return fmt.Errorf("cluster %s: starting its Work controller: %w", o.Cluster, err)
		}
		<-ctx.Done()
		m.stop()
		return nil
	}))
}
