package localfleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/agent"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/membership"
)

// pullAgents are the agents `up --pull-members` runs in this process, one
// per Pull member, as each would run inside its cluster.
type pullAgents struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
}

// startPullAgents starts the agent of each member in pulls against the hub
// and returns once each has registered its cluster and runs, or the first
// has failed (then every agent is stopped). stop ends them all.
// Each probes its member every statusInterval, as the hub probes the others.
// Each is registered first (membership.RegisterPull) and reaches the hub
// as its own ServiceAccount, with rights over its cluster alone.
func startPullAgents(ctx context.Context, hubClient client.Client, hub *rest.Config, pulls []fleet.Endpoint,
	statusInterval time.Duration) (*pullAgents, error) {
	ctx, cancel := context.WithCancel(ctx)
	a := &pullAgents{cancel: cancel}
	running := make(chan struct{}, len(pulls))
	failed := make(chan error, len(pulls))
	for _, m := range pulls {
		token, err := membership.RegisterPull(ctx, hubClient, m.Name)
		if err != nil {
			return nil, errors.Join(err, a.stop())
		}
		o := agent.DefaultOptions()
		o.ClusterName, o.Hub, o.Member = m.Name, membership.AgentConfig(hub, token), m.Config
		// One agent per member, beside the fleet: no Lease to share, no ports.
		o.LeaderElect, o.MetricsAddr, o.HealthProbeAddr = false, "0", "0"
		o.ClusterStatusUpdateFrequency = statusInterval
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := agent.Run(ctx, o, func() { running <- struct{}{} }); err != nil && ctx.Err() == nil {
				err = fmt.Errorf("the agent of Pull member %s: %w", m.Name, err)
				a.mu.Lock()
				a.errs = append(a.errs, err)
				a.mu.Unlock()
				failed <- err
			}
		}()
	}
	for range pulls {
		select {
		case <-running:
		case err := <-failed:
			return nil, errors.Join(err, a.stop())
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), a.stop())
		}
	}
	return a, nil
}

// stop ends every agent and returns once none runs, with what failed.
func (a *pullAgents) stop() error {
	if a == nil {
		return nil
	}
	a.cancel()
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	return errors.Join(a.errs...)
}
