package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Settling: every fault ended, every hold lifted, and every member
// waited for until it has every latest version.

// settle ends every fault, lifts every hold and waits for every member to
// have every latest version: what an operator does after an incident.
func (r *chaosRun) settle(ctx context.Context, step int, label string) (*result, error) {
	if r.paused != "" {
		if err := r.resumeMember(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.restartExited(); err != nil {
		return nil, err
	}
	if err := r.resumeEverything(ctx, step+1, label); err != nil {
		return nil, err
	}
	return r.converge(ctx)
}

// resumeEverything lifts every hold, one write at a time, as a person
// would after an incident, and re-creates the policy if it is gone. Its
// writes are numbered from step and their history says label.
func (r *chaosRun) resumeEverything(ctx context.Context, step int, label string) error {
	do := func(o op, change func(*state)) error {
		err := r.writeOp(ctx, step, label, o, change)
		step++
		return err
	}
	s := r.current()
	if s.Freezing {
		if err := do(op{Kind: opUnfreeze}, func(n *state) { n.Freezing, n.Freeze = false, nil }); err != nil {
			return err
		}
	}
	if !s.PolicyExists {
		if err := do(op{Kind: opRecreatePolicy}, func(n *state) { n.PolicyExists, n.Frozen = true, nil }); err != nil {
			return err
		}
	}
	// The Rollout goes: its second stage waits for a promote of each
	// revision (and on bare members without --ready-deployments no
	// Deployment is ever healthy, so no revision passes the first);
	// deleting the Rollout lifts its holds (docs/rollouts.md).
	if r.current().Rollout != nil {
		if err := do(op{Kind: opRolloutDelete}, func(n *state) { n.Rollout = nil }); err != nil {
			return err
		}
	}
	// Deleted templates come back (the policy exists again by now), with
	// the version they had.
	for _, t := range r.current().deleted() {
		if err := do(op{Kind: opRecreateTemplate, Template: t, Version: r.current().Templates[t].Version}, func(n *state) {
			x := n.Templates[t]
			x.Deleted = false
			n.Templates[t] = x
		}); err != nil {
			return err
		}
	}
	// Every member is placed again.
	for _, m := range slices.Sorted(maps.Keys(r.current().Unplaced)) {
		if err := do(op{Kind: opPlacement, Member: m}, func(n *state) { n.Unplaced = toggle(n.Unplaced, m) }); err != nil {
			return err
		}
	}
	s = r.current()
	if s.PolicySuspended {
		if err := do(op{Kind: opPolicySuspend}, func(n *state) { n.PolicySuspended = false }); err != nil {
			return err
		}
	}
	for _, m := range slices.Sorted(maps.Keys(s.PolicyClusters)) {
		if err := do(op{Kind: opPolicyCluster, Member: m}, func(n *state) { n.PolicyClusters = toggle(n.PolicyClusters, m) }); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.PolicyGates)) {
		if err := do(op{Kind: opGateUnlist, Gate: name}, func(n *state) { n.PolicyGates = toggle(n.PolicyGates, name) }); err != nil {
			return err
		}
	}
	if s.SuspendAll || len(s.SuspendOn) > 0 {
		if err := do(op{Kind: opSuspendAll}, func(n *state) { n.SuspendAll, n.SuspendOn = false, nil }); err != nil {
			return err
		}
	}
	for _, t := range s.used() {
		ts := s.Templates[t]
		if ts.Suspended {
			if err := do(op{Kind: opTemplateSuspend, Template: t}, func(n *state) {
				x := n.Templates[t]
				x.Suspended = false
				n.Templates[t] = x
			}); err != nil {
				return err
			}
		}
		for _, m := range slices.Sorted(maps.Keys(ts.Clusters)) {
			if err := do(op{Kind: opTemplateCluster, Template: t, Member: m}, func(n *state) {
				x := n.Templates[t]
				x.Clusters = toggle(x.Clusters, m)
				n.Templates[t] = x
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeOp writes o, which change makes of the current state, outside the
// seed's operations: its history says label.
func (r *chaosRun) writeOp(ctx context.Context, step int, label string, o op, change func(*state)) error {
	n := r.current().clone()
	change(&n)
	sent := time.Now()
	if err := write(ctx, r.hub, r.callers, o, &n, r.names, r.o.workloads, &sent); err != nil {
		return fmt.Errorf("%s, %s: %w", label, o, err)
	}
	r.record(step, label+" "+o.String(), sent, time.Now(), n)
	return nil
}

// converge waits until every member stores the latest version of every
// template, and says how long that took from the last write.
func (r *chaosRun) converge(ctx context.Context) (*result, error) {
	s := r.current()
	r.mu.Lock()
	since := r.intents[len(r.intents)-1].Done
	r.mu.Unlock()
	deadline := time.Now().Add(r.o.converge)
	for {
		var stale []string
		var keys [][2]string // template, member of each stale line
		for _, m := range r.names {
			for _, t := range s.used() {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvkOf(t))
				have := "absent"
				if err := r.members[m].Get(ctx, types.NamespacedName{Namespace: namespace, Name: t}, u); err == nil {
					have = versionOf(t)(u)
				} else if client.IgnoreNotFound(err) != nil {
					have = "error: " + err.Error()
				}
				if want := s.versionFor(t, m); have != want {
					stale = append(stale, fmt.Sprintf("%s in %s: has %s, want %s", t, m, have, want))
					keys = append(keys, [2]string{t, m})
				}
			}
		}
		if len(stale) == 0 {
			return &result{converged: time.Since(since)}, nil
		}
		if time.Now().After(deadline) {
			for i, k := range keys {
				stale[i] += "\n    " + r.explainStale(ctx, k[0], k[1])
			}
			return &result{stale: stale, converged: time.Since(since)}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
