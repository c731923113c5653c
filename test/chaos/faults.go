package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The faults a run injects between operations (docs/reliability.md): each
// records its span, which the checker reads (a freeze or an etcd restart
// stretches what may still be in flight on that member).

// killController SIGKILLs one replica, the leader or a standby (the
// operations cannot tell which leads), and starts it again after down.
func (r *chaosRun) killController(down time.Duration) error {
	c := r.ctrls[r.faultRng.Intn(len(r.ctrls))]
	from, err := c.killFor(down)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.faults = append(r.faults, fault{Kind: faultKillController, Member: c.name, From: from, To: time.Now()})
	r.mu.Unlock()
	logf("controller %s killed (SIGKILL) and restarted after %s", c.name, down)
	return nil
}

// restartExited starts again the replicas and agents that exited by
// themselves, as a kubelet restarts a container.
func (r *chaosRun) restartExited() error {
	names, err := r.processes().restartExited()
	r.restarted += len(names)
	for _, n := range names {
		logf("%s had exited by itself (--controller-log keeps its log); started again", n)
	}
	return err
}

// processes are the controller's replicas and the Pull members' agents.
func (r *chaosRun) processes() replicas { return append(slices.Clip(r.ctrls), r.agents...) }

// restartEtcd stops a member's etcd and starts it again after down, with
// its data: the member's API server fails or holds requests meanwhile.
func (r *chaosRun) restartEtcd(member string, down time.Duration) error {
	m := r.fleet.Member(member)
	from := time.Now()
	if err := m.StopEtcd(); err != nil {
		return err
	}
	time.Sleep(down)
	if err := m.StartEtcd(); err != nil {
		return err
	}
	// The member's API server stores what it took during the outage only
	// once its etcd client is back, seconds after etcd (seen: 3–5 s): the
	// fault lasts until the member stores a write of this program's own.
	back, err := r.memberStores(member)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.faults = append(r.faults, fault{Kind: faultRestartEtcd, Member: member, From: from, To: time.Now()})
	r.mu.Unlock()
	logf("%s's etcd stopped and started again after %s; the member stored writes again %s later", member, down, back.Round(time.Millisecond))
	return nil
}

// memberStores waits until member stores a write (a ConfigMap of this
// program's own in kube-system, which nothing else watches) and says how
// long that took.
func (r *chaosRun) memberStores(member string) (time.Duration, error) {
	began := time.Now()
	c := r.members[member]
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "chaos-etcd-probe"},
			Data: map[string]string{"at": time.Now().UTC().Format(time.RFC3339Nano)}}
		err := c.Update(ctx, cm)
		if apierrors.IsNotFound(err) {
			err = c.Create(ctx, cm)
		}
		cancel()
		if err == nil {
			return time.Since(began), nil
		}
		if time.Since(began) > time.Minute {
			return 0, fmt.Errorf("%s stores no write a minute after its etcd restarted: %w", member, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// restartHub stops the hub's API server and starts it again after down,
// on the same address (etcd keeps the data): the controllers' watches
// break, and a leader that cannot renew its Lease in time stops leading.
func (r *chaosRun) restartHub(down time.Duration) error {
	from := time.Now()
	if err := r.fleet.Hub.StopAPIServer(); err != nil {
		return err
	}
	time.Sleep(down)
	if err := r.fleet.Hub.StartAPIServer(); err != nil {
		return err
	}
	r.mu.Lock()
	r.faults = append(r.faults, fault{Kind: faultRestartHub, From: from, To: time.Now()})
	r.mu.Unlock()
	logf("hub API server stopped and started again after %s (back after %s)", down, time.Since(from).Round(time.Millisecond))
	return nil
}

func (r *chaosRun) pauseMember(member string) error {
	if err := r.fleet.Member(member).PauseAPIServer(); err != nil {
		return err
	}
	r.mu.Lock()
	r.paused = member
	r.faults = append(r.faults, fault{Kind: faultPauseMember, Member: member, From: time.Now()})
	r.mu.Unlock()
	logf("%s's API server frozen (SIGSTOP)", member)
	return nil
}

func (r *chaosRun) resumeMember(ctx context.Context) error {
	r.mu.Lock()
	member := r.paused
	r.mu.Unlock()
	if err := r.fleet.Member(member).ResumeAPIServer(); err != nil {
		return err
	}
	r.mu.Lock()
	r.paused = ""
	// The last fault is this pause unless a kill came between.
	for i := len(r.faults) - 1; i >= 0; i-- {
		if r.faults[i].Kind == faultPauseMember && r.faults[i].Member == member {
			r.faults[i].To = time.Now()
			break
		}
	}
	waiting := r.agentsWaiting
	r.agentsWaiting = nil
	r.mu.Unlock()
	logf("%s's API server goes on (SIGCONT)", member)
	for _, i := range waiting {
		if err := r.agentRuns(ctx, i); err != nil {
			return err
		}
	}
	return nil
}
