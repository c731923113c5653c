package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// state is everything the user has written that decides whether a
// template's version may be stored on a member: the model the checker
// judges stored versions against. It is a value; every write makes a new
// one.
type state struct {
	PolicyExists bool
	// PolicySuspended: the policy carries propagation.federator.dev/suspended.
	PolicySuspended bool
	// PolicyClusters: clusters the policy holds by
	// suspended.propagation.federator.dev/<cluster>.
	PolicyClusters map[string]bool
	// SuspendAll: spec.suspension.dispatching is true.
	SuspendAll bool
	// SuspendOn: clusters in spec.suspension.dispatchingOnClusters.
	SuspendOn map[string]bool
	Templates map[string]templateState
	// DeletionDelay is the policy's federator.dev/deletion-delay (0: none):
	// how long a member's copy of a deleted template counts down before it
	// is deleted.
	DeletionDelay time.Duration
	// Unplaced: members the policy's placement leaves out
	// (spec.placement.clusterAffinity.clusterNames lists the others; never
	// all of them).
	Unplaced map[string]bool
	// PolicyGates: the gates the policy lists in gating.federator.dev/gates.
	PolicyGates map[string]bool
	// Gates: the Gates that exist in the namespace, by name (absent: no
	// such Gate), with the requests their annotations carry.
	Gates map[string]gateState
	// DeletedSent and DeletedDone: when the deletion of the policy was
	// sent and returned, while it is gone. The Works keep the gate
	// decisions the binding controller last made before it saw the
	// deletion, which it may make at any instant of that write, or within
	// the grace after it from a lagging cache.
	DeletedSent, DeletedDone time.Time
	// Frozen is the state as it was when the policy was deleted, while it
	// is gone: the Works keep the holds and the manifests they last had
	// (docs/reliability.md: holds outlive the policy that set them), so the policy's
	// part of the decision and the version a Work carries are that
	// state's. nil while the policy exists.
	Frozen *state
	// Rollout is the Rollout over the policy as the user wrote it
	// (rollout.go); nil: none.
	Rollout *rolloutState
	// Override is the tag suffix the OverridePolicy adds to the
	// Deployments' image on the Labeled members ("": no OverridePolicy);
	// Labeled are the members whose Cluster carries overrideLabel
	// (overrides.go).
	Override string
	Labeled  map[string]bool
	// Freezing: a Freeze is in force (freeze.go); Freeze are the members
	// it holds, nil for every member.
	Freezing bool
	Freeze   map[string]bool
}

type templateState struct {
	Version   string
	Suspended bool
	Clusters  map[string]bool
	// Deleted: the template is deleted from the hub (its annotations went
	// with it); Version is what it is created again with.
	Deleted bool
}

// existing and deleted are the templates that exist in s and those
// deleted, in the order of templates.
func (s state) existing() []string {
	return slices.DeleteFunc(s.used(), func(t string) bool { return s.Templates[t].Deleted })
}

func (s state) deleted() []string {
	return slices.DeleteFunc(s.used(), func(t string) bool { return !s.Templates[t].Deleted })
}

// used are the templates of the run s belongs to, deleted or not, in the
// order of templates.
func (s state) used() []string {
	return slices.DeleteFunc(slices.Clone(templates), func(t string) bool { _, ok := s.Templates[t]; return !ok })
}

// deletionDelay is the delay a template deleted in s counts down with on
// the members: the policy's, or, while the policy is deleted, the one its
// Works kept.
func (s state) deletionDelay() time.Duration {
	if !s.PolicyExists && s.Frozen != nil {
		return s.Frozen.DeletionDelay
	}
	return s.DeletionDelay
}

// goneFrom is whether s takes template off member: the template deleted,
// or member out of the placement (while the policy is deleted, the one its
// Works kept). A member's copy is then deleted once the deletion delay
// passes.
func (s state) goneFrom(template, member string) bool {
	p := s
	if !s.PolicyExists && s.Frozen != nil {
		p = *s.Frozen
	}
	return s.Templates[template].Deleted || p.Unplaced[member]
}

// placed are the members s's placement lists, in the order of members.
func (s state) placed(members []string) []string {
	return slices.DeleteFunc(slices.Clone(members), func(m string) bool { return s.Unplaced[m] })
}

func (s state) clone() state {
	c := s
	c.PolicyGates = maps.Clone(s.PolicyGates)
	c.Gates = maps.Clone(s.Gates)
	c.PolicyClusters = maps.Clone(s.PolicyClusters)
	c.SuspendOn = maps.Clone(s.SuspendOn)
	c.Unplaced = maps.Clone(s.Unplaced)
	c.Labeled = maps.Clone(s.Labeled)
	c.Freeze = maps.Clone(s.Freeze)
	c.Rollout = s.Rollout.clone()
	c.Templates = map[string]templateState{}
	for k, t := range s.Templates {
		t.Clusters = maps.Clone(t.Clusters)
		c.Templates[k] = t
	}
	return c
}

// releasesAt reports whether s releases template's version for member at
// t, and which version that is ("" when held). Only gates make the answer
// depend on t; grace is how long after a deleted policy's write a lagging
// cache may still have judged its gates (see DeletedSent).
func (s state) releasesAt(template, member string, t time.Time, grace time.Duration) (string, bool) {
	holds, v := s.decide(template, member, t, grace)
	return v, len(holds) == 0
}

// decide lists what holds template on member in s at t, for a person, and
// the version s sends member (versionFor).
func (s state) decide(template, member string, t time.Time, grace time.Duration) ([]string, string) {
	var out []string
	tpl := s.Templates[template]
	// The template's own holds are the user's latest word even while no
	// policy claims the template.
	if tpl.Suspended {
		out = append(out, "template suspended")
	}
	if tpl.Clusters[member] {
		out = append(out, "template suspends "+member)
	}
	if tpl.Deleted {
		out = append(out, "template deleted")
	}
	// A freeze holds whatever the policy, deleted or not, says.
	if s.frozen(member) {
		out = append(out, "frozen")
	}
	p := s
	gateOpen := func(name string) (bool, bool) {
		g, ok := s.Gates[name]
		return ok, ok && g.openAt(t)
	}
	if !s.PolicyExists {
		if s.Frozen == nil {
			return append(out, "policy deleted, with no state before it"), ""
		}
		p = *s.Frozen
		ft := p.Templates[template]
		if ft.Suspended {
			out = append(out, "template suspended when the policy was deleted")
		}
		if ft.Clusters[member] {
			out = append(out, "template suspended "+member+" when the policy was deleted")
		}
		if ft.Deleted {
			out = append(out, "template deleted when the policy was deleted")
		}
		// The Works keep the gate decision last made before the
		// controller saw the deletion; a gate opened just after the
		// deletion may have been seen first.
		lag := s.DeletedDone.Add(grace)
		gateOpen = func(name string) (bool, bool) {
			g, ok := p.Gates[name]
			now, okNow := s.Gates[name]
			found := ok || okNow && t.Before(lag)
			return found, ok && g.openDuring(s.DeletedSent, lag) || okNow && t.Before(lag) && now.openAt(t)
		}
	}
	if p.Unplaced[member] {
		out = append(out, "not placed on "+member)
	}
	if p.PolicySuspended {
		out = append(out, "policy suspended")
	}
	if p.PolicyClusters[member] {
		out = append(out, "policy suspends "+member)
	}
	if p.SuspendAll {
		out = append(out, "spec.suspension.dispatching")
	}
	if p.SuspendOn[member] {
		out = append(out, "spec.suspension.dispatchingOnClusters has "+member)
	}
	for _, name := range slices.Sorted(maps.Keys(p.PolicyGates)) {
		switch found, open := gateOpen(name); {
		case !found:
			out = append(out, "gate "+name+" missing")
		case !open:
			out = append(out, "gate "+name+" closed")
		}
	}
	slices.Sort(out)
	return out, p.rendered(template, member)
}

// gateChanges are the instants at which s's decision may change by
// itself: when a gate's request comes into force or lapses, and when the
// lag after a deleted policy's write ends.
func (s state) gateChanges(from, to time.Time, grace time.Duration) []time.Time {
	var out []time.Time
	for _, g := range s.Gates {
		out = append(out, g.changes(from, to)...)
	}
	if s.Frozen != nil {
		for _, g := range s.Frozen.Gates {
			out = append(out, g.changes(from, to)...)
		}
		out = append(out, s.DeletedDone.Add(grace))
	}
	return out
}

// describe is the decision of s for template on every member at t, for a
// person: "member1=v3 member2=held".
func (s state) describe(template string, members []string, t time.Time, grace time.Duration) string {
	out := ""
	for i, m := range members {
		if i > 0 {
			out += " "
		}
		if v, ok := s.releasesAt(template, m, t, grace); ok {
			out += m + "=" + v
		} else {
			out += m + "=held"
		}
	}
	return out
}

// holdsOf lists what holds template on member in s at t, for a person.
func (s state) holdsOf(template, member string, t time.Time, grace time.Duration) []string {
	holds, _ := s.decide(template, member, t, grace)
	if !s.PolicyExists {
		holds = append(holds, "(policy deleted: its holds frozen)")
	}
	return holds
}

// describeGates says which gates s's policy lists and what each one's
// requests are, times as rel gives them: "approval: open t+1.2s, close
// t+4.2s".
func (s state) describeGates(rel func(time.Time) string) string {
	p := s
	if !s.PolicyExists && s.Frozen != nil {
		p = *s.Frozen
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(p.PolicyGates)) {
		g, ok := s.Gates[name]
		if !ok {
			out = append(out, name+": missing")
			continue
		}
		d := name + ":"
		if !g.OpenAt.IsZero() {
			d += " open " + rel(g.OpenAt)
		}
		if !g.CloseAt.IsZero() {
			d += " close " + rel(g.CloseAt)
		}
		if g.Window > 0 {
			d += fmt.Sprintf(" window %s", g.Window)
		}
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

// intent is one user write: when it was sent, when it returned, and the
// state it left.
type intent struct {
	Step  int
	Op    string
	Sent  time.Time
	Done  time.Time
	State state
}

// fault is an injected fault: a controller killed and restarted, or a
// member API server frozen (From) and let go (To).
type fault struct {
	Kind string
	// Member is the member of a freeze or an etcd restart, the replica of
	// a controller kill, the Pull member of an agent kill, the resource of
	// a lag.
	Member string
	From   time.Time
	To     time.Time
	// Lag is how late a lag-informers episode delivers its watch events.
	Lag time.Duration `json:",omitempty"`
}
