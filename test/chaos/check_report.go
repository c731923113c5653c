package main

import (
	"fmt"
	"strings"
	"time"
)

// The report of a violation, for a person.

// report describes v for a person: the version, where and when it was
// stored, the intents around it and the faults in that time.
func (c *checker) report(v *violation, members []string, began time.Time) string {
	var b strings.Builder
	s := v.Stored
	from, to := s.window()
	rel := func(t time.Time) string { return fmt.Sprintf("t+%.3fs", t.Sub(began).Seconds()) }
	if d := v.Removal; d != nil {
		seen := "seen deleted at"
		if d.InGap {
			seen = "gone or replaced by another UID when its recorder listed again, after a gap, at"
		}
		fmt.Fprintf(&b, "VIOLATION: %s deleted its copy of %s (uid %s, last resourceVersion %s), %s %s (%s),\n",
			d.Member, d.Template, d.UID, d.ResourceVersion, seen, rel(d.Observed), d.Observed.UTC().Format(time.RFC3339Nano))
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
		if in.State.rendered(s.Template, s.Member) == s.Version {
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
			in.State.rendered(s.Template, s.Member), rel(at), in.State.describe(s.Template, members, at, c.grace), holds)
	}
	for _, f := range c.faults {
		if !f.To.Before(from.Add(-10*time.Second)) && !f.From.After(to.Add(2*time.Second)) {
			fmt.Fprintf(&b, "  fault %s %s from %s to %s\n", f.Kind, f.Member, rel(f.From), rel(f.To))
		}
	}
	return b.String()
}
