package kindfleet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/federator-dev/federator/pkg/fleet"
)

var _ fleet.Faults = (*Fleet)(nil)

// StopMember puts member out of service: its node containers are paused
// (`podman pause` or `docker pause`: the cgroup freezer stops every process
// of the node, its API server among them), so requests to its API server
// time out. A kind node cannot lose only its API server the way a local
// fleet's member does (kubelet restarts it), so an outage here is a frozen
// member, as HangMember: the member is unreachable, and comes back whole.
func (f *Fleet) StopMember(member string) error { return f.HangMember(member) }

// StartMember ends StopMember.
func (f *Fleet) StartMember(member string) error { return f.ResumeMember(member) }

// HangMember freezes member's nodes: the host still accepts connections to
// its API server's published port (the kernel of the node's network
// namespace completes them), nothing answers, as with a hung member.
func (f *Fleet) HangMember(member string) error { return f.nodes(member, "pause") }

// ResumeMember lets member's nodes go on after HangMember.
func (f *Fleet) ResumeMember(member string) error { return f.nodes(member, "unpause") }

// nodes runs `ENGINE verb NODE` for each node of member's kind cluster.
func (f *Fleet) nodes(member, verb string) error {
	kindName := ""
	for _, c := range f.created {
		if c.name == member {
			kindName = c.kindName
		}
	}
	if kindName == "" || member == fleet.HubName {
		return fmt.Errorf("kind fleet: no member %s in this fleet", member)
	}
	ns, err := f.provider.ListNodes(kindName)
	if err != nil {
		return fmt.Errorf("kind fleet: nodes of %s: %w", kindName, err)
	}
	for _, n := range ns {
		err := retryFreeze(func() error {
			_, err := f.engine.cli().run(context.Background(), nil, verb, n.String())
			return err
		}, time.Sleep)
		if err != nil {
			return fmt.Errorf("kind fleet: %s %s %s (member %s): %w", f.engine, verb, n.String(), member, err)
		}
	}
	return nil
}

// freezeTries bounds the tries of a pause the cgroup freezer gave up on.
const freezeTries = 5

// retryFreeze runs pause (or unpause) again while runc says it was "unable
// to freeze": the cgroup v1 freezer gives up when the node's processes are
// busy forking, as just after an unpause (seen: a pause 1.4 s after the
// unpause of the same node failed so). Each try waits twice as long, from
// 250 ms; any other error is returned at once.
func retryFreeze(run func() error, sleep func(time.Duration)) error {
	wait := 250 * time.Millisecond
	for try := 1; ; try++ {
		err := run()
		if err == nil || try == freezeTries || !strings.Contains(err.Error(), "unable to freeze") {
			return err
		}
		sleep(wait)
		wait *= 2
	}
}
