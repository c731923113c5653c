package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Rollout stages in the model and the checker: what the user wrote about
// the Rollout over the chaos policy, and rule (a)'s "not before its
// stage".

// stageSpec is one of a Rollout's spec.stages as the user wrote it.
type stageSpec struct {
	Name     string
	Clusters []string
	// Soak is the stage's minSuccessTime.
	Soak time.Duration
	// Pause: the stage waits for `federator rollout promote`.
	Pause bool
	// Gates are the stage's gates: it starts only while every one exists
	// and is open (a closed or missing one holds it; pkg/rollout).
	Gates []string
}

// rolloutState is the Rollout (rollouts.federator.dev) over the chaos
// policy as the user wrote it.
type rolloutState struct {
	// Stages are spec.stages; the placed clusters no stage names form the
	// implicit last stage.
	Stages []stageSpec
	// Paused: the Rollout carries propagation.federator.dev/suspended
	// (`federator rollout pause`).
	Paused bool
	// Promoted is, by stage, when the last `federator rollout promote
	// --stage` of it was sent: it promotes the revision the Rollout's
	// status named then.
	Promoted map[string]time.Time
}

func (r *rolloutState) clone() *rolloutState {
	if r == nil {
		return nil
	}
	c := *r
	c.Stages = slices.Clone(r.Stages)
	for i := range c.Stages {
		c.Stages[i].Gates = slices.Clone(r.Stages[i].Gates)
	}
	c.Promoted = maps.Clone(r.Promoted)
	return &c
}

// stageOf is the index of member's stage: the first that names it, else
// the implicit last one (len(Stages)).
func (r *rolloutState) stageOf(member string) int {
	for i, st := range r.Stages {
		if slices.Contains(st.Clusters, member) {
			return i
		}
	}
	return len(r.Stages)
}

// rollout is the Rollout deciding in s: while the policy is deleted, the
// one its Works kept the decision of (the rollout controller steps only
// while the policy exists, and the Works keep their holds meanwhile).
func (s state) rollout() *rolloutState {
	if !s.PolicyExists && s.Frozen != nil {
		return s.Frozen.Rollout
	}
	return s.Rollout
}

// describeRollout says what s's Rollout is, times as rel gives them, for
// a person: "paused, approve promoted t+3.1s"; "" when there is none.
func (s state) describeRollout(rel func(time.Time) string) string {
	r := s.rollout()
	if r == nil {
		return ""
	}
	var out []string
	if r.Paused {
		out = append(out, "paused")
	}
	for _, name := range slices.Sorted(maps.Keys(r.Promoted)) {
		out = append(out, name+" promoted "+rel(r.Promoted[name]))
	}
	if len(out) == 0 {
		return "exists"
	}
	return strings.Join(out, ", ")
}

// has is whether s sends member template at version, or its Works kept
// that while the policy is deleted.
func (s state) has(template, member, version string) bool {
	return s.rendered(template, member) == version || !s.PolicyExists && s.Frozen != nil && s.Frozen.rendered(template, member) == version
}

// introduced is the first write whose state sends member template at
// version.
func (c *checker) introduced(template, member, version string) (intent, bool) {
	for _, in := range c.intents {
		if in.State.rendered(template, member) == version {
			return in, true
		}
	}
	return intent{}, false
}

// firstStored is the earliest a member stored template at version: the
// start of the earliest window of a recorded store of it.
func (c *checker) firstStored(template, member, version string) (time.Time, bool) {
	var first time.Time
	found := false
	for _, s := range c.stores {
		if s.Template != template || s.Member != member || s.Version != version {
			continue
		}
		if from, _ := s.window(); !found || from.Before(first) {
			first, found = from, true
		}
	}
	return first, found
}

// placedThroughout is whether member was placed (as the policy, or a
// deleted policy's Works, had it) in every state that may have been the
// controllers' view in [from, to]: each from when it was sent until the
// next write returned, plus the grace.
func (c *checker) placedThroughout(member string, from, to time.Time) bool {
	for i, in := range c.intents {
		end := forever
		if i+1 < len(c.intents) {
			end = c.intents[i+1].Done.Add(c.grace)
		}
		if in.Sent.After(to) || end.Before(from) {
			continue
		}
		p := in.State
		if !p.PolicyExists && p.Frozen != nil {
			p = *p.Frozen
		}
		if p.Unplaced[member] {
			return false
		}
	}
	return true
}

// stageReady is the earliest instant r's stage machine may release
// template's version to s's member, judged from the user's writes and
// the recorded stores (pkg/rollout's Step); why says what it waits for
// when it never may before s's store ended.
//
// The stage of a cluster starts only once every earlier stage is settled
// (each of its clusters Healthy: its Work carries the revision's content
// and is applied, so the member stored that version: what in, a state
// that sent s's member its version, sends that cluster, overrides
// included) and has soaked for
// its minSuccessTime. A cluster of an earlier stage that a suspension or
// a gate holds counts as released but not settled (Held), so the rollout
// waits for it too: it must have stored the version whatever held it.
// A stage whose clusters the placement leaves out is empty and skipped,
// so an earlier cluster counts only when it was placed throughout, from
// the version's first write to the store. A stage that pauses starts only
// once promoted at a revision that took in the version, so after a
// promote sent after the version was first written; a cluster left out
// of the placement meanwhile may come back to a stage already done and be
// released without it, so that counts only for a cluster placed
// throughout too. Health itself (the member's status) is not recorded;
// the soak is counted from the earliest store, which is earlier than the
// health the controller saw: the check is necessary, not sufficient.
func (c *checker) stageReady(r *rolloutState, in state, s stored, introduced time.Time) (time.Time, string) {
	_, to := s.window()
	ready := introduced
	k := r.stageOf(s.Member)
	for i := range min(k, len(r.Stages)) {
		st := r.Stages[i]
		held := false // a cluster of the stage was placed throughout
		for _, e := range st.Clusters {
			if e == s.Member || !c.placedThroughout(e, introduced, to) {
				continue
			}
			held = true
			first, ok := c.firstStored(s.Template, e, in.versionFor(s.Template, e))
			if !ok || first.After(to) {
				return ready, fmt.Sprintf("%s of the earlier stage '%s' had not stored it", e, st.Name)
			}
			if at := first.Add(st.Soak); at.After(ready) {
				ready = at
			}
		}
		// Every cluster waits at a new revision, those whose copy it
		// leaves as it was too (an override that applies elsewhere), so
		// an earlier stage that pauses or has gates holds the later
		// ones until it starts.
		if !held {
			continue
		}
		if why := c.stageStart(r, st, introduced, &ready, to); why != "" {
			return ready, "the earlier " + why
		}
	}
	if k < len(r.Stages) && c.placedThroughout(s.Member, introduced, to) {
		if why := c.stageStart(r, r.Stages[k], introduced, &ready, to); why != "" {
			return ready, "its " + why
		}
	}
	return ready, ""
}

// stageStart says why st could not start between ready and to ("" when
// it could), and moves ready to its promote: a stage that pauses starts
// once promoted after the version was first written (introduced), and a
// stage with gates while every one is open.
func (c *checker) stageStart(r *rolloutState, st stageSpec, introduced time.Time, ready *time.Time, to time.Time) string {
	if st.Pause {
		p, ok := r.Promoted[st.Name]
		if !ok || !p.After(introduced) {
			return fmt.Sprintf("stage '%s' pauses and was not promoted after the version was first written", st.Name)
		}
		if p.After(*ready) {
			*ready = p
		}
	}
	for _, gate := range st.Gates {
		if !c.gateOpenBetween(gate, *ready, to) {
			return fmt.Sprintf("stage '%s' waits for gate '%s', which was closed or missing from then to the store", st.Name, gate)
		}
	}
	return ""
}

// gateOpenBetween is whether gate was open at some instant of [from, to]
// by a state the user wrote that counted then: each from when it was sent
// until the next write returned, plus the grace (a close a controller has
// not yet seen). A stage waits for its gates only to start: once one of
// its clusters is released at a revision, the gates no longer matter to
// it (pkg/rollout's machine), so this is necessary, not sufficient.
func (c *checker) gateOpenBetween(gate string, from, to time.Time) bool {
	for j, in := range c.intents {
		end := forever
		if j+1 < len(c.intents) {
			end = c.intents[j+1].Done.Add(c.grace)
		}
		lo, hi := in.Sent, end
		if from.After(lo) {
			lo = from
		}
		if to.Before(hi) {
			hi = to
		}
		if lo.After(hi) {
			continue
		}
		if g, ok := in.State.Gates[gate]; ok && g.openDuring(lo, hi) {
			return true
		}
	}
	return false
}

// stageHold says why no Rollout the user wrote released s's version to
// its member by the time it was stored; "" when one did (or none held
// it). A Rollout's release is a status that stays: a cluster released the
// revision that took in the version keeps it released until the
// template's content changes, so a store may come long after the release
// (a suspension lifted later); what must hold is that at some instant
// before the store ended, a state the user wrote with that version
// released it by the rollout: no Rollout (none yet, or it was deleted:
// deleting a Rollout lifts its holds), or a Rollout not paused whose
// stage machine had let the member's stage start (stageReady). A version
// released while no Rollout existed stays released when one is created:
// its first revision is what runs already, released to every cluster at
// once (docs/rollouts.md); the run waits for the Rollout to take it in
// before it writes anything else, so no later version is taken in as the
// first revision. A state counts from when its write was sent until
// the next write returned plus the grace: a rollout controller deciding
// from a cache that had not yet seen a pause is not a violation.
func (c *checker) stageHold(s stored) string {
	_, to := s.window()
	first, ok := c.introduced(s.Template, s.Member, s.Version)
	if !ok {
		return "" // a version no one wrote: check reports it
	}
	why := ""
	for j, in := range c.intents {
		if in.Sent.After(to) {
			break
		}
		if !in.State.has(s.Template, s.Member, s.Version) {
			continue
		}
		end := forever
		if j+1 < len(c.intents) {
			end = c.intents[j+1].Done.Add(c.grace)
		}
		from := in.Sent
		if first.Sent.After(from) {
			from = first.Sent
		}
		switch r := in.State.rollout(); {
		case r == nil:
		case r.Paused:
			if why == "" {
				why = "the Rollout was paused"
			}
			continue
		default:
			ready, w := c.stageReady(r, in.State, s, first.Sent)
			if w == "" && ready.After(to) {
				w = fmt.Sprintf("its stage could start only %s after the store, once the earlier stages had stored it and soaked (and it was promoted)",
					ready.Sub(to).Round(time.Millisecond))
			}
			if w != "" {
				why = w
				continue
			}
			if ready.After(from) {
				from = ready
			}
		}
		if !from.After(end) && !from.After(to) {
			return ""
		}
	}
	if why == "" {
		why = "its stage had not started"
	}
	return why
}

// underRollout is whether a Rollout the user wrote may have decided s: one
// existed in a state that counted while s was written.
func (c *checker) underRollout(s stored) bool {
	from, to := s.window()
	for j, in := range c.intents {
		end := forever
		if j+1 < len(c.intents) {
			end = c.intents[j+1].Done.Add(c.grace)
		}
		if in.State.rollout() != nil && !in.Sent.After(to) && !end.Before(from) {
			return true
		}
	}
	return false
}
