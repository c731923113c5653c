package main

import (
	"fmt"
	"time"
)

// The check of deletions: a member's copy seen deleted must have been due.

// checkRemoval returns nil when d, a member's copy seen deleted, was due:
// the user took the template off that member (deleted it, or left the
// member out of the placement) at some write sent before d was seen, its
// deletion delay had passed since that write was sent (the countdown
// starts no earlier), and it was not put back early enough to take that
// countdown back (created again or placed again, that write returned,
// plus the grace, any freeze or etcd restart of the member, and the time
// the controllers could not act, before the delay ended); and no freeze
// of that member was in force when it was seen (frozenWhen): a freeze
// delays a due deletion until it ends.
func (c *checker) checkRemoval(d removal) *violation {
	at := stored{Template: d.Template, Member: d.Member, Observed: d.Observed, ResourceVersion: d.ResourceVersion}
	if why := c.frozenWhen(d); why != "" {
		return c.removalViolation(at, d, why)
	}
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

// frozenWhen says which freeze held d's member when d was seen, "" when
// none did: the user's latest write sent before then freezes the member,
// and the first write of that run of freezes was in force (returned, plus
// what may still be in flight then: inFlight) before d was seen.
func (c *checker) frozenWhen(d removal) string {
	last := -1
	for i := range c.intents {
		if !c.intents[i].Sent.After(d.Observed) {
			last = i
		}
	}
	if last < 0 || !c.intents[last].State.frozen(d.Member) {
		return ""
	}
	first := last
	for first > 0 && c.intents[first-1].State.frozen(d.Member) {
		first--
	}
	freeze := c.intents[first]
	if c.inFlight(d.Member, span{from: freeze.Sent, to: freeze.Done}).After(d.Observed) {
		return ""
	}
	return fmt.Sprintf("the freeze of step %d (%s) held %s, written %s before: a freeze delays a deletion until it ends",
		freeze.Step, freeze.Op, d.Member, d.Observed.Sub(freeze.Sent).Round(time.Millisecond))
}

// leaderTakeover is how long a killed leader's Lease keeps the standby
// from leading (the chaos replicas' --leader-elect-lease-duration).
const leaderTakeover = 3 * time.Second

// takenBackBy is when a countdown put back by again is taken back at the
// latest, judged against due: the write returned, plus the grace and the
// member's freezes (inFlight), plus every time before due in which the
// controllers could not act (the hub's API server down, a controller
// killed and its Lease not yet expired), the member's agent, for a Pull
// member, could not (killed, until it ran again), or the member could
// not be written (frozen, its etcd restarting).
func (c *checker) takenBackBy(member string, again intent, due time.Time) time.Time {
	by := c.inFlight(member, span{from: again.Sent, to: again.Done})
	for _, f := range c.faults {
		stall := f.To.Sub(f.From)
		switch {
		case f.Kind == faultRestartHub:
		case f.Kind == faultKillController:
			stall += leaderTakeover
		case f.Kind == faultKillAgent && f.Member == member:
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
