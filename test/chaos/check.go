package main

import (
	"fmt"
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
// span stretches to the end of such a freeze, plus grace.
func (c *checker) released(i int, template, member string) (string, []span) {
	in := c.intents[i]
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

// violation is a stored version no state the user wrote released in time.
type violation struct {
	Stored stored
	// Around are the intents whose span comes near the write.
	Around []int
}

// check returns nil when some state the user wrote released s.Version for
// s.Member at an instant the write may have happened in, else the
// violation.
func (c *checker) check(s stored) *violation {
	from, to := s.window()
	for i := range c.intents {
		v, spans := c.released(i, s.Template, s.Member)
		if v != s.Version {
			continue
		}
		for _, sp := range spans {
			if !sp.from.After(to) && !sp.to.Before(from) {
				return nil
			}
		}
	}
	// Around: the writes of the few seconds before the store (the last
	// one before it even if older) up to shortly after it.
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
	return &violation{Stored: s, Around: around}
}

// report describes v for a person: the version, where and when it was
// stored, the intents around it and the faults in that time.
func (c *checker) report(v *violation, members []string, began time.Time) string {
	var b strings.Builder
	s := v.Stored
	from, to := s.window()
	rel := func(t time.Time) string { return fmt.Sprintf("t+%.3fs", t.Sub(began).Seconds()) }
	fmt.Fprintf(&b, "VIOLATION: %s stored %s version %q (resourceVersion %s), written between %s and %s (observed %s, %s),\n",
		s.Member, s.Template, s.Version, s.ResourceVersion, rel(from), rel(to), rel(s.Observed), s.Observed.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "but no state the user wrote released %q for %s in that time (grace %s after a hold returned).\n", s.Version, s.Member, c.grace)
	fmt.Fprintf(&b, "Its field managers: %s.\n", strings.Join(s.Writers, "; "))
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
