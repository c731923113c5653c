package main

import (
	"maps"
	"slices"
	"time"
)

// stored is one version of a template a member stored, as recorded.
type stored struct {
	Template string
	Member   string
	Version  string
	// Written is the latest managedFields time of the stored object: the
	// API server's clock at the write, truncated to the second, so the
	// write happened in [Written, Written+1s) and no later than Observed.
	Written time.Time
	// Observed is when the recorder received it.
	Observed time.Time
	// ResourceVersion names the stored object's version.
	ResourceVersion string
	// Writers are its field managers, with the time each last wrote.
	Writers []string
}

// window is when the write of s happened at the latest and at the earliest.
func (s stored) window() (from, to time.Time) {
	to = s.Observed
	if s.Written.IsZero() || s.Written.After(to) {
		return to, to
	}
	return s.Written, to
}

// checker judges stored versions against the user's history.
type checker struct {
	intents []intent
	faults  []fault
	// grace is how long after a write that holds returned a version it
	// held may still be stored: the controllers' reaction time (the
	// binding controller reads the hold, writes the Work, the dispatcher's
	// cache receives it). A version the dispatcher sent before that is
	// "in flight", not a violation.
	grace time.Duration
	// stores are every version recorded on every member: a Rollout's
	// stage starts only once the earlier stages stored the version.
	stores []stored
}

// span is a time a stored version may have been written in.
type span struct{ from, to time.Time }

var forever = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// released are the spans in which intents[i] released its version of
// template for member, and that version. intents[i] counts as the user's
// latest word from when its write was sent until the next write returned;
// within that, gates may open and close by the clock (a request coming
// into force or lapsing), so it releases in the parts where its decision
// at that instant does. A version the controllers were already applying
// when a hold began (the next write, or a gate closing by itself) may
// still land within grace after, and a member frozen (SIGSTOP) then stores
// a request it received before the freeze only once it runs again, so a
// span stretches to the end of such a freeze, plus grace. st is
// intents[i]'s state or one of its variants (stateVariants).
func (c *checker) released(i int, st state, template, member string) (string, []span) {
	in := c.intents[i]
	in.State = st
	end := forever
	if i+1 < len(c.intents) {
		end = c.intents[i+1].Done
	}
	points := []time.Time{in.Sent}
	for _, p := range in.State.gateChanges(in.Sent, end, c.grace) {
		if p.After(in.Sent) && p.Before(end) {
			points = append(points, p)
		}
	}
	slices.SortFunc(points, time.Time.Compare)
	version := ""
	var out []span
	open := false
	for k, a := range points {
		b := end
		if k+1 < len(points) {
			b = points[k+1]
		}
		v, ok := in.State.releasesAt(template, member, a, c.grace)
		if !ok {
			open = false
			continue
		}
		version = v
		if open {
			out[len(out)-1].to = b
		} else {
			out = append(out, span{from: a, to: b})
		}
		open = true
	}
	for k := range out {
		out[k].to = c.inFlight(member, out[k])
	}
	return version, out
}

// stateVariants are the states intents[i] may stand for: its own, its
// mixed views (mixedViews) and, while the policy is deleted, that state
// with the deleted policy's placement, the templates' versions and the
// overrides as each state written within the grace before the deletion
// had them. Only the holds of a policy being
// deleted are carried onto its bindings before it goes (its finalizer); a
// placement or a version written just before may not have reached the
// binding and its Works, which keep what they last had, as Karmada's do.
// The holds stay the last state's.
func (c *checker) stateVariants(i int) []state {
	s := c.intents[i].State
	out := append([]state{s}, c.mixedViews(i)...)
	if s.PolicyExists || s.Frozen == nil {
		return out
	}
	d := i // the deletion: the first write of the policy's absence
	for d > 0 && !c.intents[d-1].State.PolicyExists {
		d--
	}
	for k := d - 2; k >= 0; k-- {
		alt := c.intents[k].State
		if !alt.PolicyExists || c.intents[k+1].Done.Before(c.intents[d].Sent.Add(-c.grace)) {
			break
		}
		v, f := s.clone(), s.Frozen.clone()
		for t, ts := range f.Templates {
			ts.Version = alt.Templates[t].Version
			f.Templates[t] = ts
		}
		f.Unplaced = maps.Clone(alt.Unplaced)
		f.Override, f.Labeled = alt.Override, maps.Clone(alt.Labeled)
		v.Frozen = &f
		out = append(out, v)
	}
	return out
}

// mixedViews are intents[i]'s state with the OverridePolicy, or the
// Cluster labels, of a neighbouring state that counted at the same time:
// a controller renders a member's copy from its caches of the template,
// the OverridePolicies and the Clusters, each of which may show a
// different write when writes come close together (or one informer
// lags), as Karmada's do. Such a copy is none the user wrote as a whole,
// but each of its parts was the user's word at that time.
func (c *checker) mixedViews(i int) []state {
	lag := c.grace
	for _, f := range c.faults {
		if f.Kind == faultLagInformers && f.Lag+c.grace > lag {
			lag = f.Lag + c.grace
		}
	}
	spanOf := func(k int) (time.Time, time.Time) {
		end := forever
		if k+1 < len(c.intents) {
			end = c.intents[k+1].Done.Add(lag)
		}
		return c.intents[k].Sent, end
	}
	s := c.intents[i].State
	from, to := spanOf(i)
	var out []state
	for k := max(0, i-4); k < min(len(c.intents), i+5); k++ {
		alt := c.intents[k].State
		kFrom, kTo := spanOf(k)
		if k == i || kFrom.After(to) || kTo.Before(from) {
			continue
		}
		if alt.Override != s.Override {
			v := s.clone()
			v.Override = alt.Override
			out = append(out, v)
		}
		if !maps.Equal(alt.Labeled, s.Labeled) {
			v := s.clone()
			v.Labeled = maps.Clone(alt.Labeled)
			out = append(out, v)
		}
	}
	return out
}

// etcdRecovery is how long after its etcd is back a member's API server
// may still store writes it took while etcd was down: its etcd client
// retries them with a backoff. Seen in a 1,000-step run (seed 2026): 3.1,
// 4.4 and 5.3 s after the member stored a new write again.
const etcdRecovery = 10 * time.Second

// inFlight is until when a version released in sp may still be stored on
// member: the end of sp plus grace, or the end of a freeze of member in
// that time plus grace, or of an etcd restart plus etcdRecovery and grace
// (a write the API server took before is stored only once etcd is back).
func (c *checker) inFlight(member string, sp span) time.Time {
	if !sp.to.Before(forever) {
		return sp.to
	}
	to := sp.to.Add(c.grace)
	for _, f := range c.faults {
		// A hold written while an informer lags reaches the controllers
		// up to the lag late, if it travels through that informer.
		if f.Kind == faultLagInformers && !f.From.After(sp.to) && !f.To.Before(sp.to) {
			if end := sp.to.Add(c.grace + f.Lag); end.After(to) {
				to = end
			}
			continue
		}
		if f.Kind != faultPauseMember && f.Kind != faultRestartEtcd || f.Member != member {
			continue
		}
		// A write sent while the member recovers from an etcd restart
		// is as late as one sent during it.
		over := f.To
		if f.Kind == faultRestartEtcd {
			over = over.Add(etcdRecovery)
		}
		if !f.From.After(to) && !over.Before(sp.from) {
			if end := over.Add(c.grace); end.After(to) {
				to = end
			}
		}
	}
	return to
}

// violation is a stored version no state the user wrote released in time,
// or a deletion no state the user wrote made due.
type violation struct {
	Stored stored
	// Removal, when set, is the deletion that was not due; Stored then
	// names its template, member and time only. Why says why, and, for
	// a store the holds released, why the Rollout had not.
	Removal *removal
	Why     string
	// Around are the intents whose span comes near the write.
	Around []int
}

// check returns nil when some state the user wrote released s.Version for
// s.Member at an instant the write may have happened in, else the
// violation.
// When the holds released it, the Rollout must have released it too
// (stageHold); Why then says why it did not.
func (c *checker) check(s stored) *violation {
	from, to := s.window()
	if c.releasedByHolds(s) {
		why := c.stageHold(s)
		if why == "" {
			return nil
		}
		return &violation{Stored: s, Why: why, Around: c.around(from, to)}
	}
	return &violation{Stored: s, Around: c.around(from, to)}
}

// releasedByHolds is whether some state the user wrote released
// s.Version for s.Member, by every hold but the Rollout's, at an instant
// the write may have happened in.
func (c *checker) releasedByHolds(s stored) bool {
	from, to := s.window()
	for i := range c.intents {
		for _, st := range c.stateVariants(i) {
			v, spans := c.released(i, st, s.Template, s.Member)
			if v != s.Version {
				continue
			}
			for _, sp := range spans {
				if !sp.from.After(to) && !sp.to.Before(from) {
					return true
				}
			}
		}
	}
	return false
}

// around are the writes of the few seconds before [from, to] (the last
// one before it even if older) up to shortly after it.
func (c *checker) around(from, to time.Time) []int {
	var around []int
	for i, in := range c.intents {
		before := i+1 < len(c.intents) && !c.intents[i+1].Sent.After(from)
		if !in.Sent.After(to.Add(2*time.Second)) && (!in.Done.Before(from.Add(-6*time.Second)) || !before) {
			around = append(around, i)
		}
	}
	if len(around) > 30 {
		around = around[len(around)-30:]
	}
	return around
}
