package main

import (
	"maps"
	"slices"
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
	// Frozen is the state as it was when the policy was deleted, while it
	// is gone: the Works keep the holds and the manifests they last had
	// (docs/reliability.md: holds outlive the policy that set them), so the policy's
	// part of the decision and the version a Work carries are that
	// state's. nil while the policy exists.
	Frozen *state
}

type templateState struct {
	Version   string
	Suspended bool
	Clusters  map[string]bool
}

func (s state) clone() state {
	c := s
	c.PolicyClusters = maps.Clone(s.PolicyClusters)
	c.SuspendOn = maps.Clone(s.SuspendOn)
	c.Templates = map[string]templateState{}
	for k, t := range s.Templates {
		t.Clusters = maps.Clone(t.Clusters)
		c.Templates[k] = t
	}
	return c
}

// releases reports whether s releases template's version for member, and
// which version that is ("" when held).
func (s state) releases(template, member string) (string, bool) {
	t := s.Templates[template]
	// The template's own holds are the user's latest word even while no
	// policy claims the template.
	if t.Suspended || t.Clusters[member] {
		return "", false
	}
	policy := s
	if !s.PolicyExists {
		if s.Frozen == nil {
			return "", false
		}
		policy = *s.Frozen
		t = s.Frozen.Templates[template]
		if t.Suspended || t.Clusters[member] {
			return "", false
		}
	}
	if policy.PolicySuspended || policy.PolicyClusters[member] || policy.SuspendAll || policy.SuspendOn[member] {
		return "", false
	}
	return t.Version, true
}

// describe is the decision of s for template on every member, for a
// person: "member1=v3 member2=held".
func (s state) describe(template string, members []string) string {
	out := ""
	for i, m := range members {
		if i > 0 {
			out += " "
		}
		if v, ok := s.releases(template, m); ok {
			out += m + "=" + v
		} else {
			out += m + "=held"
		}
	}
	return out
}

// holdsOf lists what holds template on member in s, for a person.
func (s state) holdsOf(template, member string) []string {
	var out []string
	t := s.Templates[template]
	if t.Suspended {
		out = append(out, "template suspended")
	}
	if t.Clusters[member] {
		out = append(out, "template suspends "+member)
	}
	p := s
	if !s.PolicyExists {
		out = append(out, "policy deleted (holds frozen)")
		if s.Frozen == nil {
			return out
		}
		p = *s.Frozen
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
	slices.Sort(out)
	return out
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
	Kind   string
	Member string
	From   time.Time
	To     time.Time
}
