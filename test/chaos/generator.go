package main

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"time"
)

// The seeded generator: which operation comes next, valid in the model's
// state, and the state it leaves.

// deletionDelays are the values an opDeletionDelay chooses from: none, one
// that usually ends during the run's next operations, and one that a
// re-creation usually comes within.
var deletionDelays = []time.Duration{0, 3 * time.Second, 12 * time.Second}

// generator chooses operations from a seeded source; the choice depends
// only on the seed and the model, never on timing, so a seed replays the
// same operations and faults in the same order.
type generator struct {
	rng     *rand.Rand
	seed    int64
	members []string
	version int
	// gates: choose Gate operations too. Without, a seed chooses the
	// operations it chose before Gates were added.
	gates bool
	// deletions: delete templates and create them again, and change the
	// policy's deletion delay. Without, a seed chooses the operations it
	// chose before deletions were added.
	deletions bool
	// placement: take members out of the policy's placement and put them
	// back. Without, a seed chooses the operations it chose before.
	placement bool
	// rollouts: create a Rollout over the policy, pause, resume and
	// promote it, and delete it. Without, a seed chooses the operations
	// it chose before Rollouts were added.
	rollouts bool
	// clusterLists: suspend and resume two or more members of the policy
	// in one write (opPolicyClusterList), and lift the policy's per-cluster
	// holds that way too. Without, a seed chooses the operations it chose
	// before lists were added.
	clusterLists bool
	// overrides: edit an OverridePolicy over the Deployments and the
	// Cluster label it targets (overrides.go). Without, a seed chooses
	// the operations it chose before these edits were added.
	overrides bool
	override  int
	// freezes: freeze every member or some, and unfreeze (freeze.go).
	// Without, a seed chooses the operations it chose before freezes
	// were added.
	freezes bool
}

func (g *generator) newVersion(template string) string {
	g.version++
	v := fmt.Sprintf("s%d-v%d", g.seed, g.version)
	if template != "web-a" && template != "web-b" {
		return v
	}
	return "chaos.local/web:" + v
}

// next picks an operation valid in s and returns it with the state it leaves.
func (g *generator) next(s state) (op, state) {
	choices := []choice{{opVersion, 8}, {opTemplateSuspend, 3}, {opTemplateCluster, 2}}
	if s.PolicyExists {
		choices = append(choices, choice{opPolicySuspend, 3}, choice{opPolicyCluster, 2})
		if g.clusterLists && len(g.members) > 1 {
			choices = append(choices, choice{opPolicyClusterList, 2})
		}
		choices = append(choices, choice{opSuspendAll, 2}, choice{opSuspendOn, 2}, choice{opDeletePolicy, 1})
	} else {
		choices = append(choices, choice{opRecreatePolicy, 4})
	}
	if g.gates {
		choices = append(choices, choice{opGate, 6})
	}
	// Templates are deleted and created again only while the policy
	// exists: one created while no policy claims it is placed nowhere.
	if g.deletions && s.PolicyExists {
		if len(s.existing()) > 1 {
			choices = append(choices, choice{opDeleteTemplate, 1})
		}
		if len(s.deleted()) > 0 {
			choices = append(choices, choice{opRecreateTemplate, 4})
		}
		choices = append(choices, choice{opDeletionDelay, 1})
	}
	if g.placement && s.PolicyExists {
		choices = append(choices, choice{opPlacement, 2})
	}
	// Rollout operations only while the policy exists: the rollout
	// controller steps only then, and a Rollout created without one takes
	// in its first revision whenever the policy comes back.
	if g.rollouts && s.PolicyExists {
		if s.Rollout == nil {
			choices = append(choices, choice{opRolloutCreate, 2})
		} else {
			choices = append(choices, choice{opRolloutPause, 2}, choice{opRolloutPromote, 2}, choice{opRolloutDelete, 1})
		}
	}
	if g.overrides {
		choices = append(choices, choice{opOverride, 3}, choice{opRelabel, 3})
	}
	if g.freezes {
		if s.Freezing {
			choices = append(choices, choice{opUnfreeze, 3})
		} else {
			choices = append(choices, choice{opFreeze, 1})
		}
	}
	kind := pick(g.rng, choices)
	o := op{Kind: kind}
	if kind == opGate {
		o = g.gateOp(s)
		kind = o.Kind
	}
	n := s.clone()
	switch kind {
	case opVersion, opTemplateSuspend, opTemplateCluster, opDeleteTemplate:
		existing := s.existing()
		o.Template = existing[g.rng.Intn(len(existing))]
	case opRecreateTemplate:
		deleted := s.deleted()
		o.Template = deleted[g.rng.Intn(len(deleted))]
	}
	switch kind {
	case opTemplateCluster, opPolicyCluster, opSuspendOn, opPlacement, opRelabel:
		o.Member = g.members[g.rng.Intn(len(g.members))]
	case opPolicyClusterList:
		o.Clusters, o.Resume = g.clusterList(s)
	}
	// The placement never leaves out every member: the last one placed
	// stays, and one left out comes back instead.
	if kind == opPlacement && !s.Unplaced[o.Member] && len(s.placed(g.members)) == 1 {
		out := slices.Sorted(maps.Keys(s.Unplaced))
		o.Member = out[g.rng.Intn(len(out))]
	}
	// As often as not, lift one of the holds in force instead: with
	// every hold a coin flip, versions would hardly ever be released.
	if lifts := liftable(s, g.clusterLists); len(lifts) > 0 && kind != opVersion && kind != opRecreatePolicy && kind != opRecreateTemplate &&
		kind != opDeleteTemplate && kind != opDeletionDelay && kind != opRolloutCreate && kind != opRolloutDelete &&
		kind != opOverride && kind != opRelabel && kind != opUnfreeze && g.rng.Intn(2) == 0 {
		o = lifts[g.rng.Intn(len(lifts))]
		kind = o.Kind
	}
	if kind == opSuspendAll || kind == opSuspendOn {
		o.Alias = g.rng.Intn(2) == 0
	}
	// Mostly an open that lapses during the run, the interesting case:
	// the gate holds again by the clock; sometimes one that lasts (until
	// the next request, or the gate's spec.window). A close flips back
	// open now and then.
	switch {
	case kind == opGateOpen && g.rng.Intn(3) > 0, kind == opGateClose && g.rng.Intn(4) == 0:
		o.For = time.Duration(1+g.rng.Intn(6)) * time.Second
	}
	t := n.Templates[o.Template]
	switch kind {
	case opVersion:
		o.Version = g.newVersion(o.Template)
		t.Version = o.Version
	case opTemplateSuspend:
		t.Suspended = !t.Suspended
	case opTemplateCluster:
		t.Clusters = toggle(t.Clusters, o.Member)
	case opPolicySuspend:
		n.PolicySuspended = !n.PolicySuspended
	case opPolicyCluster:
		n.PolicyClusters = toggle(n.PolicyClusters, o.Member)
	case opPolicyClusterList:
		n.PolicyClusters = setAll(n.PolicyClusters, o.Clusters, !o.Resume)
	// The hub refuses dispatching: true beside a dispatchingOnClusters
	// list (an admission policy), so one replaces the other, as a person
	// has to.
	case opSuspendAll:
		n.SuspendAll = !n.SuspendAll
		if n.SuspendAll {
			n.SuspendOn = nil
		}
	case opSuspendOn:
		if n.SuspendAll {
			n.SuspendAll, n.SuspendOn = false, map[string]bool{o.Member: true}
		} else {
			n.SuspendOn = toggle(n.SuspendOn, o.Member)
		}
	case opDeleteTemplate:
		// Its annotations go with it; it comes back with none.
		t.Deleted, t.Suspended, t.Clusters = true, false, nil
	case opRecreateTemplate:
		t.Deleted = false
		o.Version = t.Version
	case opDeletionDelay:
		o.Delay = deletionDelays[g.rng.Intn(len(deletionDelays))]
		n.DeletionDelay = o.Delay
	case opPlacement:
		n.Unplaced = toggle(n.Unplaced, o.Member)
	case opDeletePolicy:
		frozen := s.clone()
		n.PolicyExists, n.Frozen = false, &frozen
	case opRecreatePolicy:
		n.PolicyExists, n.Frozen = true, nil
		n.DeletedSent, n.DeletedDone = time.Time{}, time.Time{}
	case opGateCreate:
		if n.Gates == nil {
			n.Gates = map[string]gateState{}
		}
		n.Gates[o.Gate] = gateState{Window: gateWindow[o.Gate], Scheduled: gateScheduled[o.Gate]}
	case opGateDelete:
		delete(n.Gates, o.Gate)
	case opGateList, opGateUnlist:
		n.PolicyGates = toggle(n.PolicyGates, o.Gate)
	case opRolloutCreate:
		n.Rollout = &rolloutState{Stages: chaosStages(g.members)}
		if g.gates {
			n.Rollout.Stages = gatedStages(g.members)
		}
	case opRolloutPause:
		n.Rollout.Paused = !n.Rollout.Paused
	case opRolloutPromote:
		// The promote's time is the write's (write fills it in).
		o.Stage = promotedStage
	case opRolloutDelete:
		n.Rollout = nil
	case opOverride:
		// A new suffix, or, one time in three, no OverridePolicy.
		if s.Override == "" || g.rng.Intn(3) > 0 {
			g.override++
			o.Suffix = fmt.Sprintf("-o%d", g.override)
		}
		n.Override = o.Suffix
	case opRelabel:
		n.Labeled = toggle(n.Labeled, o.Member)
	case opFreeze:
		// Every member one time in two, else one or two of them.
		n.Freezing, n.Freeze = true, nil
		if g.rng.Intn(2) == 0 {
			for _, m := range g.members {
				if len(o.Clusters) < 2 && g.rng.Intn(2) == 0 {
					o.Clusters = append(o.Clusters, m)
				}
			}
			if len(o.Clusters) == 0 {
				o.Clusters = g.members[:1]
			}
			n.Freeze = setAll(nil, o.Clusters, true)
		}
	case opUnfreeze:
		n.Freezing, n.Freeze = false, nil
		// opGateOpen and opGateClose: the request times are the write's
		// (write fills them in).
	}
	if o.Template != "" {
		n.Templates[o.Template] = t
	}
	return o, n
}

// opGate stands for the Gate operations when the kind is drawn; gateOp
// chooses which.
const opGate = "gate"

type choice struct {
	kind   string
	weight int
}

// pick draws one kind of choices by weight.
func pick(rng *rand.Rand, choices []choice) string {
	total := 0
	for _, c := range choices {
		total += c.weight
	}
	n := rng.Intn(total)
	for _, c := range choices {
		if n < c.weight {
			return c.kind
		}
		n -= c.weight
	}
	return choices[len(choices)-1].kind
}

// gateOp chooses a Gate and an operation valid for it in s: create it
// (closed) when it does not exist, else open, close or delete it (a
// missing gate a policy lists holds); list it on the policy or take it off.
// The choice reads only what exists and what is listed, never whether a
// gate is open now, which depends on the clock.
func (g *generator) gateOp(s state) op {
	name := gateNames[g.rng.Intn(len(gateNames))]
	var choices []choice
	if _, ok := s.Gates[name]; ok {
		choices = append(choices, choice{opGateOpen, 4}, choice{opGateClose, 2}, choice{opGateDelete, 1})
	} else {
		choices = append(choices, choice{opGateCreate, 3})
	}
	if s.PolicyExists {
		if s.PolicyGates[name] {
			choices = append(choices, choice{opGateUnlist, 1})
		} else {
			choices = append(choices, choice{opGateList, 3})
		}
	}
	return op{Kind: pick(g.rng, choices), Gate: name}
}

// clusterList draws two or more members, in the order of the members, and
// whether to resume them: a list the policy holds every member of is
// resumed, one it holds none of suspended, and one it holds some of either
// (the CLI writes what changes; the other annotations are written as they
// are).
func (g *generator) clusterList(s state) ([]string, bool) {
	n := 2 + g.rng.Intn(len(g.members)-1)
	picked := g.rng.Perm(len(g.members))[:n]
	slices.Sort(picked)
	out := make([]string, n)
	held := 0
	for i, k := range picked {
		out[i] = g.members[k]
		if s.PolicyClusters[out[i]] {
			held++
		}
	}
	switch held {
	case 0:
		return out, false
	case n:
		return out, true
	}
	return out, g.rng.Intn(2) == 0
}

// liftable are the operations that would lift a hold in force in s, in
// a fixed order. With lists, the policy's per-cluster holds, when there
// are two or more, may also be lifted in one write
// (`federator resume pp NAME --clusters a,b`); without, the lifts are
// those chosen before lists were added.
func liftable(s state, lists bool) []op {
	var out []op
	for _, t := range s.used() {
		ts := s.Templates[t]
		if ts.Suspended {
			out = append(out, op{Kind: opTemplateSuspend, Template: t})
		}
		for _, m := range slices.Sorted(maps.Keys(ts.Clusters)) {
			out = append(out, op{Kind: opTemplateCluster, Template: t, Member: m})
		}
	}
	if s.Freezing {
		out = append(out, op{Kind: opUnfreeze})
	}
	if !s.PolicyExists {
		return out
	}
	if s.PolicySuspended {
		out = append(out, op{Kind: opPolicySuspend})
	}
	for _, m := range slices.Sorted(maps.Keys(s.PolicyClusters)) {
		out = append(out, op{Kind: opPolicyCluster, Member: m})
	}
	if lists && len(s.PolicyClusters) > 1 {
		out = append(out, op{Kind: opPolicyClusterList, Clusters: slices.Sorted(maps.Keys(s.PolicyClusters)), Resume: true})
	}
	// A member left out of the placement is put back.
	for _, m := range slices.Sorted(maps.Keys(s.Unplaced)) {
		out = append(out, op{Kind: opPlacement, Member: m})
	}
	if s.SuspendAll {
		out = append(out, op{Kind: opSuspendAll})
	}
	for _, m := range slices.Sorted(maps.Keys(s.SuspendOn)) {
		out = append(out, op{Kind: opSuspendOn, Member: m})
	}
	if s.Rollout != nil && s.Rollout.Paused {
		out = append(out, op{Kind: opRolloutPause})
	}
	// A gate the policy lists is lifted by opening it (it may be open
	// already: which depends on the clock) or by taking it off the list.
	for _, name := range slices.Sorted(maps.Keys(s.PolicyGates)) {
		if _, ok := s.Gates[name]; ok {
			out = append(out, op{Kind: opGateOpen, Gate: name})
		}
		out = append(out, op{Kind: opGateUnlist, Gate: name})
	}
	return out
}

// setAll is set with every key of keys in it (in) or out of it (!in).
func setAll(set map[string]bool, keys []string, in bool) map[string]bool {
	set = maps.Clone(set)
	if set == nil {
		set = map[string]bool{}
	}
	for _, k := range keys {
		if in {
			set[k] = true
		} else {
			delete(set, k)
		}
	}
	return set
}

func toggle(set map[string]bool, key string) map[string]bool {
	set = maps.Clone(set)
	if set == nil {
		set = map[string]bool{}
	}
	if set[key] {
		delete(set, key)
	} else {
		set[key] = true
	}
	return set
}

// faultDraw is what a step's draw of the operations' generator injects
// before its operation: a replica of the controller killed, down for
// down; a member's API server frozen until step pausedUntil; or the agent
// of Pull member agent killed, down for down.
type faultDraw struct {
	killController bool
	pause          bool
	member         string
	pausedUntil    int
	killAgent      bool
	agent          int
	down           time.Duration
}

// drawFault draws a step's fault: kill-controller and pause-member as they
// always were, and kill-agent, with agents Pull members, from the same
// draw (agentKill), so a seed's operations and other faults are those it
// chose without Pull members. A member is frozen only if none is
// (pausedUntil, the step the last freeze ends, is past).
func (g *generator) drawFault(step, pausedUntil, agents int) faultDraw {
	f := g.rng.Float64()
	switch {
	case f < 0.07:
		return faultDraw{killController: true, down: time.Duration(g.rng.Intn(1500)) * time.Millisecond}
	case f < 0.14 && step >= pausedUntil: // no member is frozen
		member := g.members[g.rng.Intn(len(g.members))]
		return faultDraw{pause: true, member: member, pausedUntil: step + 2 + g.rng.Intn(7)}
	}
	kill, agent, down := agentKill(f, agents)
	return faultDraw{killAgent: kill, agent: agent, down: down}
}
