package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
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

// stateVariants are the states intents[i] may stand for: its own and,
// while the policy is deleted, that state with the deleted policy's
// placement and the templates' versions as each state written within the
// grace before the deletion had them. Only the holds of a policy being
// deleted are carried onto its bindings before it goes (its finalizer); a
// placement or a version written just before may not have reached the
// binding and its Works, which keep what they last had, as Karmada's do.
// The holds stay the last state's.
func (c *checker) stateVariants(i int) []state {
	s := c.intents[i].State
	out := []state{s}
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
		v.Frozen = &f
		out = append(out, v)
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

// checkRemoval returns nil when d, a member's copy seen deleted, was due:
// the user took the template off that member (deleted it, or left the
// member out of the placement) at some write sent before d was seen, its
// deletion delay had passed since that write was sent (the countdown
// starts no earlier), and it was not put back early enough to take that
// countdown back (created again or placed again, that write returned,
// plus the grace, any freeze or etcd restart of the member, and the time
// the controllers could not act, before the delay ended).
func (c *checker) checkRemoval(d removal) *violation {
	at := stored{Template: d.Template, Member: d.Member, Observed: d.Observed, ResourceVersion: d.ResourceVersion}
	gone := func(i int) bool { return c.intents[i].State.goneFrom(d.Template, d.Member) }
	why := ""
	for i := len(c.intents) - 1; i >= 1; i-- {
		if c.intents[i].Sent.After(d.Observed) || !gone(i) || gone(i-1) {
			continue
		}
		w := c.removalNotDue(d, i, gone)
		if w == "" {
			return nil
		}
		if why == "" {
			why = w // the latest removal's, for the report
		}
	}
	if why == "" {
		why = "neither a deletion of the template nor a placement leaving " + d.Member + " out was written before"
	}
	return c.removalViolation(at, d, why)
}

// removalNotDue says why intents[i], which took the template off d's
// member, does not make d due; "" when it does.
func (c *checker) removalNotDue(d removal, i int, gone func(int) bool) string {
	del := c.intents[i]
	what := "the placement leaving " + d.Member + " out"
	if del.State.Templates[d.Template].Deleted {
		what = "the template's deletion"
	}
	delay := c.delayAround(i)
	due := del.Sent.Add(delay)
	if d.Observed.Before(due) {
		return fmt.Sprintf("%s (step %d) was sent %s before, with a deletion delay of %s",
			what, del.Step, d.Observed.Sub(del.Sent).Round(time.Millisecond), delay)
	}
	for j := i + 1; j < len(c.intents) && c.intents[j].Sent.Before(d.Observed); j++ {
		if gone(j) || !gone(j-1) {
			continue
		}
		again := c.intents[j]
		if c.takenBackBy(d.Member, again, due).Before(due) {
			return fmt.Sprintf("it was put back (step %d, %s) %s after %s (step %d), "+
				"within its deletion delay of %s: the countdown was to be taken back", again.Step, again.Op,
				again.Sent.Sub(del.Sent).Round(time.Millisecond), what, del.Step, delay)
		}
	}
	return ""
}

// leaderTakeover is how long a killed leader's Lease keeps the standby
// from leading (the chaos replicas' --leader-elect-lease-duration).
const leaderTakeover = 3 * time.Second

// takenBackBy is when a countdown put back by again is taken back at the
// latest, judged against due: the write returned, plus the grace and the
// member's freezes (inFlight), plus every time before due in which the
// controllers could not act (the hub's API server down, a controller
// killed and its Lease not yet expired) or the member could not be
// written (frozen, its etcd restarting).
func (c *checker) takenBackBy(member string, again intent, due time.Time) time.Time {
	by := c.inFlight(member, span{from: again.Sent, to: again.Done})
	for _, f := range c.faults {
		stall := f.To.Sub(f.From)
		switch {
		case f.Kind == faultRestartHub:
		case f.Kind == faultKillController:
			stall += leaderTakeover
		case (f.Kind == faultPauseMember || f.Kind == faultRestartEtcd) && f.Member == member &&
			f.From.After(again.Done.Add(c.grace)): // one before is in inFlight's
		default:
			continue
		}
		if f.To.After(again.Done) && f.From.Before(due) {
			by = by.Add(stall)
		}
	}
	return by
}

// delayAround is the shortest deletion delay in force around the
// deletion intents[i]: in the state before it and in any written within
// the grace before it was sent, which the controllers may still have
// been acting on.
func (c *checker) delayAround(i int) time.Duration {
	delay := c.intents[i].State.deletionDelay()
	for k := i - 1; k >= 0; k-- {
		delay = min(delay, c.intents[k].State.deletionDelay())
		if c.intents[k].Done.Before(c.intents[i].Sent.Add(-c.grace)) {
			break
		}
	}
	return delay
}

func (c *checker) removalViolation(at stored, d removal, why string) *violation {
	v := &violation{Stored: at, Removal: &d, Why: why}
	for i, in := range c.intents {
		if !in.Sent.After(d.Observed.Add(2*time.Second)) && !in.Done.Before(d.Observed.Add(-20*time.Second)) {
			v.Around = append(v.Around, i)
		}
	}
	if len(v.Around) > 30 {
		v.Around = v.Around[len(v.Around)-30:]
	}
	return v
}

// report describes v for a person: the version, where and when it was
// stored, the intents around it and the faults in that time.
func (c *checker) report(v *violation, members []string, began time.Time) string {
	var b strings.Builder
	s := v.Stored
	from, to := s.window()
	rel := func(t time.Time) string { return fmt.Sprintf("t+%.3fs", t.Sub(began).Seconds()) }
	if d := v.Removal; d != nil {
		fmt.Fprintf(&b, "VIOLATION: %s deleted its copy of %s (uid %s, last resourceVersion %s), seen deleted at %s (%s),\n",
			d.Member, d.Template, d.UID, d.ResourceVersion, rel(d.Observed), d.Observed.UTC().Format(time.RFC3339Nano))
		fmt.Fprintf(&b, "before it was due: %s (grace %s).\n", v.Why, c.grace)
	} else {
		fmt.Fprintf(&b, "VIOLATION: %s stored %s version %q (resourceVersion %s), written between %s and %s (observed %s, %s),\n",
			s.Member, s.Template, s.Version, s.ResourceVersion, rel(from), rel(to), rel(s.Observed), s.Observed.UTC().Format(time.RFC3339Nano))
		if v.Why != "" {
			fmt.Fprintf(&b, "released by the holds, but no Rollout the user wrote had released %q to %s by then: %s (grace %s after a write returned).\n",
				s.Version, s.Member, v.Why, c.grace)
		} else {
			fmt.Fprintf(&b, "but no state the user wrote released %q for %s in that time (grace %s after a hold returned).\n", s.Version, s.Member, c.grace)
		}
		fmt.Fprintf(&b, "Its field managers: %s.\n", strings.Join(s.Writers, "; "))
	}
	introduced := ""
	for _, in := range c.intents {
		if in.State.Templates[s.Template].Version == s.Version {
			introduced = fmt.Sprintf("step %d (%s), sent %s", in.Step, in.Op, rel(in.Sent))
			break
		}
	}
	if introduced != "" {
		fmt.Fprintf(&b, "%q was introduced by %s.\n", s.Version, introduced)
	}
	fmt.Fprintf(&b, "Intent timeline of %s around it (sent .. returned: decision per member; holds on %s):\n", s.Template, s.Member)
	for _, i := range v.Around {
		in := c.intents[i]
		// Judged at the store when the intent counted then, else when
		// it was sent.
		at := in.Sent
		if from.After(at) && (i+1 >= len(c.intents) || !from.After(c.intents[i+1].Done)) {
			at = from
		}
		holds := strings.Join(in.State.holdsOf(s.Template, s.Member, at, c.grace), ", ")
		if holds == "" {
			holds = "none"
		}
		if g := in.State.describeGates(rel); g != "" {
			holds += " | gates " + g
		}
		if r := in.State.describeRollout(rel); r != "" {
			holds += " | rollout " + r
		}
		fmt.Fprintf(&b, "  step %3d %s .. %s %-40s latest %-26s at %s: %s | holds: %s\n", in.Step, rel(in.Sent), rel(in.Done), in.Op,
			in.State.Templates[s.Template].Version, rel(at), in.State.describe(s.Template, members, at, c.grace), holds)
	}
	for _, f := range c.faults {
		if !f.To.Before(from.Add(-10*time.Second)) && !f.From.After(to.Add(2*time.Second)) {
			fmt.Fprintf(&b, "  fault %s %s from %s to %s\n", f.Kind, f.Member, rel(f.From), rel(f.To))
		}
	}
	return b.String()
}
