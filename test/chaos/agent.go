package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/membership"
)

// Pull members (--pull-members N, docs/pull-mode.md): the last N members
// are registered in Pull mode, and each is served by its own `federator
// agent` process, which applies that member's Works; the hub never writes
// to it. The checks are those of every member: its recorders record what
// its agent stores. The kill-agent fault SIGKILLs an agent and starts it
// again, as kill-controller does a replica of the controller.

// agentReadyLine is what `federator agent` prints once it runs.
const agentReadyLine = "running against hub"

// killAgentFrom is where, in the [0, 1) draw of the operations' generator
// that chooses a step's fault, the band of kill-agent starts: right after
// the bands of kill-controller (0.07) and pause-member (0.07), in what
// chose nothing before, and as wide as kill-controller's. It takes no draw
// of its own (agentKill), so a seed chooses the same operations and other
// faults with Pull members as without.
const (
	killAgentFrom = 0.14
	killAgentBand = 0.07
	// maxAgentDown is the longest an agent stays killed before it is
	// started again, as for a replica of the controller.
	maxAgentDown = 1500 * time.Millisecond
)

// agentKill reads a step's fault draw f: whether it kills the agent of one
// of agents Pull members, which (an index), and how long it stays down;
// both come from where f falls in the band.
func agentKill(f float64, agents int) (kill bool, agent int, down time.Duration) {
	if agents == 0 || f < killAgentFrom || f >= killAgentFrom+killAgentBand {
		return false, 0, 0
	}
	u := (f - killAgentFrom) / killAgentBand * float64(agents) // [0, agents)
	agent = min(int(u), agents-1)
	return true, agent, time.Duration((u - float64(agent)) * float64(maxAgentDown))
}

// pullMembers are the members of a run in Pull mode: the last n of names
// (sorted).
func pullMembers(names []string, n int) []string {
	return slices.Clone(names[len(names)-n:])
}

// validPullMembers says what is wrong with --pull-members n on a fleet of
// members.
func validPullMembers(n, members int) error {
	if n < 0 || n > members {
		return fmt.Errorf("--pull-members %d: the fleet has %d members; give 0 to %d", n, members, members)
	}
	return nil
}

// agentArgs are the flags of member's agent: short status intervals, as
// the e2e specs give it (a Lease renewed every second), no leader election
// (one agent per member) and no ports.
func agentArgs(member, hubKubeconfig, memberKubeconfig string) []string {
	return []string{"agent", "--cluster-name", member, "--karmada-kubeconfig", hubKubeconfig, "--kubeconfig", memberKubeconfig,
		"--leader-elect=false", "--cluster-status-update-frequency=1s", "--cluster-lease-duration=4s", "--v=1"}
}

// registerPull registers m in Pull mode and makes its agent (not started):
// the agent reaches the hub as the ServiceAccount RegisterPull made for it,
// with rights over its cluster alone.
func (r *chaosRun) registerPull(ctx context.Context, m *fleet.Cluster) (*controller, error) {
	token, err := membership.RegisterPull(ctx, r.hub, m.Name)
	if err != nil {
		return nil, fmt.Errorf("register %s in Pull mode: %w", m.Name, err)
	}
	hubKubeconfig := filepath.Join(r.dir, "agent-"+m.Name+"-hub.kubeconfig")
	if err := fleet.WriteKubeconfig(hubKubeconfig, "hub", membership.AgentConfig(r.fleet.Hub.Config, token)); err != nil {
		return nil, err
	}
	name := "agent-" + m.Name
	return &controller{name: name, member: m.Name, binary: r.o.federator, logPath: filepath.Join(r.dir, "federator-"+name+".log"),
		args: agentArgs(m.Name, hubKubeconfig, m.KubeconfigPath), ready: agentReadyLine}, nil
}

// startAgents starts every agent and waits until each runs (it has
// registered its cluster and its caches of the hub are synced).
func (rs replicas) startAgents(ctx context.Context) error {
	for _, a := range rs {
		if err := a.start(); err != nil {
			return err
		}
	}
	for _, a := range rs {
		if err := a.waitRunning(ctx, 2*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// killAgent SIGKILLs the agent of a Pull member and starts it again after
// down; the fault lasts until the agent runs again (its member gets
// nothing meanwhile: the hub never writes to it). An agent whose member
// is frozen cannot run before the member goes on (it registers there
// first): resumeMember waits for it then.
func (r *chaosRun) killAgent(ctx context.Context, a *controller, down time.Duration) error {
	from, err := a.killFor(down)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.faults = append(r.faults, fault{Kind: faultKillAgent, Member: a.member, From: from})
	i, frozen := len(r.faults)-1, r.paused == a.member
	if frozen {
		r.agentsWaiting = append(r.agentsWaiting, i)
	}
	r.mu.Unlock()
	if frozen {
		logf("%s's agent killed (SIGKILL) and started again after %s; it runs once its frozen member goes on", a.member, down)
		return nil
	}
	return r.agentRuns(ctx, i)
}

// agentRuns waits until the agent killed by faults[i] runs again, which
// ends the fault; one that exits before it runs (it could not register:
// the hub or its member was away) is started again, as a kubelet would.
func (r *chaosRun) agentRuns(ctx context.Context, i int) error {
	r.mu.Lock()
	kill := r.faults[i]
	r.mu.Unlock()
	a := r.agents.of(kill.Member)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := a.waitRunning(ctx, time.Until(deadline))
		if err == nil {
			break
		}
		if a.running() || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		logf("%s's agent exited before it ran (its log: %s); started again", kill.Member, a.logPath)
		r.restarted++
		if err := a.start(); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.faults[i].To = time.Now()
	r.mu.Unlock()
	logf("%s's agent killed (SIGKILL) runs again %s after the kill", kill.Member, time.Since(kill.From).Round(time.Millisecond))
	return nil
}

// of is the agent of member.
func (rs replicas) of(member string) *controller {
	for _, a := range rs {
		if a.member == member {
			return a
		}
	}
	panic("no agent of " + member)
}
