package main

import "time"

// The model of a Gate: when it is open, by its requests, window and
// schedule.

// gateState is one Gate as the user wrote it: default closed, spec.window,
// and its request annotations.
type gateState struct {
	// Window is spec.window: how long a request is in force (0: until the
	// next request).
	Window time.Duration
	// Scheduled is a gate with spec.schedules: open for scheduleOpen at the
	// start of every minute (cron "* * * * *", UTC), closed by default
	// otherwise. A request without spec.window is then in force only until
	// the next window starts or ends.
	Scheduled bool
	// OpenAt and CloseAt are the times of the annotations
	// open.gate.federator.dev/requestedAt and
	// close.gate.federator.dev/requestedAt (zero: none).
	OpenAt, CloseAt time.Time
}

// scheduleOpen is how long the scheduled gate opens at every minute.
const scheduleOpen = 20 * time.Second

// inWindow is whether t falls in a window of the scheduled gate.
func inWindow(t time.Time) bool { return t.Sub(t.Truncate(time.Minute)) < scheduleOpen }

// nextBoundary is the first instant after t at which a window of the
// scheduled gate starts or ends.
func nextBoundary(t time.Time) time.Time {
	m := t.Truncate(time.Minute)
	if t.Before(m.Add(scheduleOpen)) {
		return m.Add(scheduleOpen)
	}
	return m.Add(time.Minute)
}

// openAt is whether the gate is open at t, by pkg/gatestate's rule for a
// gate closed by default: the newest request timed at or before t (close
// on a tie) is in force until spec.window after it, or without a window
// until the next schedule window starts or ends, or for good without
// schedules; otherwise a running schedule window opens the gate, and it is
// closed. The request the gate's status says was
// applied never differs from the newest annotation here: every request the
// run writes is timed now, after anything applied (write waits out a
// flip-back about to come into force rather than cancel it).
func (g gateState) openAt(t time.Time) bool {
	var req time.Time
	open, found := false, false
	if !g.OpenAt.IsZero() && !g.OpenAt.After(t) {
		req, open, found = g.OpenAt, true, true
	}
	if !g.CloseAt.IsZero() && !g.CloseAt.After(t) && (!found || !g.CloseAt.Before(req)) {
		req, open, found = g.CloseAt, false, true
	}
	if found {
		switch {
		case g.Window > 0:
			if t.Before(req.Add(g.Window)) {
				return open
			}
		case g.Scheduled:
			if t.Before(nextBoundary(req)) {
				return open
			}
		default:
			return open
		}
	}
	return g.Scheduled && inWindow(t)
}

// openDuring is whether the gate is open at some instant of [from, to].
func (g gateState) openDuring(from, to time.Time) bool {
	if g.openAt(from) {
		return true
	}
	for _, c := range g.changes(from, to) {
		if c.After(from) && !c.After(to) && g.openAt(c) {
			return true
		}
	}
	return false
}

// changes are the instants at which the gate may open or close by itself,
// those of its schedule between from and to (at most an hour of them).
func (g gateState) changes(from, to time.Time) []time.Time {
	var out []time.Time
	if g.Scheduled {
		if to.Sub(from) > time.Hour {
			to = from.Add(time.Hour)
		}
		for b := nextBoundary(from.Add(-time.Nanosecond)); !b.After(to); b = nextBoundary(b) {
			out = append(out, b)
		}
	}
	for _, at := range []time.Time{g.OpenAt, g.CloseAt} {
		if at.IsZero() {
			continue
		}
		out = append(out, at)
		if g.Window > 0 {
			out = append(out, at.Add(g.Window))
		}
	}
	return out
}

// request is what `federator gate open|close NAME [--for D]` writes at now
// (cmd/federator/cli/gate.go): the request timed now; with --for the
// opposite request D later, so the gate flips back then; without, the
// opposite request is removed (the webhook's calls too, pkg/gate).
func (g gateState) request(open bool, now time.Time, d time.Duration) gateState {
	this, opposite := &g.OpenAt, &g.CloseAt
	if !open {
		this, opposite = &g.CloseAt, &g.OpenAt
	}
	*this = now
	switch {
	case d > 0:
		*opposite = now.Add(d)
	default:
		*opposite = time.Time{}
	}
	return g
}
