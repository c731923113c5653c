// Package gatestate owns what state a Gate is in at an instant, and which
// Freeze holds a member then (freeze.go): pure functions of the objects and
// the time. The gate controller records the outcome
// in the Gate's status for people to read; the binding controller evaluates
// the same function with its own clock where it holds, so an expired
// request or a window that has begun holds even while the gate controller
// is off or behind.
package gatestate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	// Time zones come from the Go time zone database embedded in the
	// binary, so schedules work on machines without one.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

// The reasons of the Gate's Opened condition: what decided its state.
const (
	ReasonDefault        = gatingv1alpha1.ReasonDefault
	ReasonOpenRequested  = gatingv1alpha1.ReasonOpenRequested
	ReasonCloseRequested = gatingv1alpha1.ReasonCloseRequested
	ReasonScheduled      = gatingv1alpha1.ReasonScheduled
	ReasonInvalid        = gatingv1alpha1.ReasonInvalidSchedule
)

// DefaultInterval is how often a gate is re-evaluated when its spec does not
// say.
const DefaultInterval = time.Minute

// FutureTolerance is how far ahead of the evaluating clock a request may
// be stamped without the Opened message naming it: the hub's clocks (its
// API server's, which stamps the CLI's requests, and the controllers')
// may be that far apart, and a request a second ahead acts a second later
// without a word. One further ahead (a hand-written time, a writer's clock
// ahead, or `gate open --for`'s flip-back) is named with when it comes
// into force, so a person sees why a request made does not act yet.
const FutureTolerance = 5 * time.Second

// Request is an open or close request, from an annotation.
type Request struct {
	Open bool
	At   time.Time
}

// Evaluation is a gate's state at one instant and what decided it.
type Evaluation struct {
	Open    bool
	Reason  string
	Message string
	// Request is the request in force, nil when none.
	Request *Request
	// Until is when the state ends by itself (a request's or schedule's
	// window), nil when nothing ends it: the gate's resetToDefaultAt.
	Until *time.Time
	// Next is when to evaluate again: the earliest of NextChange and
	// now + interval.
	Next time.Time
	// NextChange is the earliest instant after now at which the state can
	// change by itself (Until, a schedule window's start or end, a request
	// timed later), nil when only a new request or a spec change can
	// change it: what waits for the gate looks again then.
	NextChange *time.Time
	// Problems are malformed requests, each naming the annotation and the
	// value; such a request is ignored.
	Problems []string
}

// Evaluate decides a gate's state at now from its spec and its request
// annotations. The rule, in order:
//
//  1. The newest well-formed open or close request is in force from its time
//     until spec.window after it (without a window: until the next schedule
//     window starts or ends, or for good when the gate has no schedules).
//     The hub decides the order, not the stamps: every writer replaces the
//     opposite request, so the request left is the one stored last, and
//     newest-wins only decides between two requests written together
//     (`gate open --for`) or by hand.
//  2. Otherwise a schedule whose window is running decides: close wins over
//     open when both run. A schedule that cannot be read closes the gate
//     (fail safe) until it is fixed.
//  3. Otherwise the gate is in its default state.
func Evaluate(spec gatingv1alpha1.GateSpec, annotations map[string]string, now time.Time) (e Evaluation) {
	interval := DefaultInterval
	if spec.Interval != nil && spec.Interval.Duration > 0 {
		interval = spec.Interval.Duration
	}
	var later []timedLater
	defer func() {
		for _, l := range later {
			if l.at.Sub(now) > FutureTolerance {
				e.Message += fmt.Sprintf("; %s is timed later: in force from %s", l.key, stamp(l.at))
			}
		}
		e.Next = now.Add(interval)
		if e.NextChange != nil && e.NextChange.Before(e.Next) {
			e.Next = *e.NextChange
		}
	}()
	sooner := func(t time.Time) {
		if t.After(now) && (e.NextChange == nil || t.Before(*e.NextChange)) {
			e.NextChange = &t
		}
	}

	windows, invalid := scheduleWindows(spec.Schedules, now)
	for _, w := range windows {
		sooner(w.nextStart)
		if w.running {
			sooner(w.end)
		}
	}

	// 1. Requests.
	var req *Request
	req, later, e.Problems = newestRequest(annotations, now)
	for _, l := range later {
		sooner(l.at) // a request timed later comes into force then
	}
	if req != nil {
		var until *time.Time
		if spec.Window != nil && spec.Window.Duration > 0 {
			t := req.At.Add(spec.Window.Duration)
			until = &t
		} else if len(spec.Schedules) > 0 {
			until = nextBoundaryAfter(spec.Schedules, req.At)
		}
		if until == nil || now.Before(*until) {
			e.Open, e.Request, e.Until = req.Open, req, until
			if until != nil {
				sooner(*until)
			}
			e.Reason, e.Message = ReasonCloseRequested, "Gate close requested"
			if req.Open {
				e.Reason, e.Message = ReasonOpenRequested, "Gate open requested"
			}
			if until != nil {
				// Say what happens when the request ends, as the RFC's
				// "Gate scheduled for closing at ..." does.
				switch after := Evaluate(spec, nil, *until); {
				case after.Open == req.Open:
					e.Message += " until " + stamp(*until)
				case after.Open:
					e.Message = "Gate scheduled for opening at " + stamp(*until)
				default:
					e.Message = "Gate scheduled for closing at " + stamp(*until)
				}
			}
			return e
		}
	}

	// 2. Schedules.
	if len(invalid) > 0 {
		e.Open, e.Reason = false, ReasonInvalid
		e.Message = "Closed: " + strings.Join(invalid, "; ") + "; fix the schedule to reopen it"
		return e
	}
	var opening *window
	for i := range windows {
		w := &windows[i]
		if !w.running {
			continue
		}
		if w.action == gatingv1alpha1.ActionClose {
			e.Open, e.Reason, e.Until = false, ReasonScheduled, &w.end
			e.Message = fmt.Sprintf("Closed by schedule '%s' until %s", w.name, stamp(w.end))
			return e
		}
		if opening == nil {
			opening = w
		}
	}
	if opening != nil {
		e.Open, e.Reason, e.Until = true, ReasonScheduled, &opening.end
		e.Message = fmt.Sprintf("Opened by schedule '%s' until %s", opening.name, stamp(opening.end))
		return e
	}

	// 3. Default.
	e.Open, e.Reason = defaultOpen(spec), ReasonDefault
	e.Message = "Gate closed by default"
	if e.Open {
		e.Message = "Gate opened by default"
	}
	return e
}

// At is the state of gate g at now: Evaluate over its spec and its request
// annotations. The gate controller and everything that holds on a gate
// call it alike, so both reach the same verdict at the same instant. The
// request the status says was applied does not count: a request stored
// after it may carry an earlier stamp (a Date header's second, a hub
// clock stepped back), and it is still the later one.
func At(g *gatingv1alpha1.Gate, now time.Time) Evaluation {
	return Evaluate(g.Spec, g.Annotations, now)
}

func defaultOpen(spec gatingv1alpha1.GateSpec) bool { return spec.Default == gatingv1alpha1.Opened }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// timedLater is a request annotation timed after now.
type timedLater struct {
	key string
	at  time.Time
}

// newestRequest is the newest well-formed request among the annotations
// that is in force at now (timed at or before it), and those timed later,
// earliest first: `federator gate open --for 1h` writes an open request
// now and a close request an hour on.
func newestRequest(annotations map[string]string, now time.Time) (*Request, []timedLater, []string) {
	var newest *Request
	var later []timedLater
	var problems []string
	for _, a := range []struct {
		key  string
		open bool
	}{{gatingv1alpha1.OpenRequestAnnotation, true}, {gatingv1alpha1.CloseRequestAnnotation, false}} {
		v, ok := annotations[a.key]
		if !ok {
			continue
		}
		at, err := RequestTime(a.key, v)
		if err != nil {
			problems = append(problems, err.Error()+"; the request is ignored")
			continue
		}
		if at.After(now) {
			later = append(later, timedLater{a.key, at})
			continue
		}
		// On a tie, close wins: the safe side.
		if newest == nil || at.After(newest.At) || at.Equal(newest.At) && !a.open {
			newest = &Request{Open: a.open, At: at}
		}
	}
	slices.SortStableFunc(later, func(a, b timedLater) int { return a.at.Compare(b.at) })
	return newest, later, problems
}

// RequestTime reads the value of a request annotation (key, for the
// message): an RFC 3339 time, as `federator gate open|close` and the
// webhook receiver write it. The gate controller, the binding controller
// and the CLI read requests with it alike.
func RequestTime(key, value string) (time.Time, error) {
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(value))
	if err != nil {
		return time.Time{}, fmt.Errorf("annotation %s: %q is not an RFC 3339 time (e.g. %s)", key, value, "2026-11-23T10:00:00Z")
	}
	return at, nil
}

// window is one schedule's situation at an instant.
type window struct {
	name, action string
	running      bool
	end          time.Time // of the running window
	nextStart    time.Time // of the next window after now
}

// parseSchedule reads a schedule's cron expression in its time zone.
func parseSchedule(s gatingv1alpha1.GateSchedule) (cron.Schedule, error) {
	tz := s.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	// "Local" loads too, but it is the zone of the machine that evaluates
	// the gate, not one the user chose: the gate and binding controllers,
	// the CLI and a laptop could each read the window differently.
	if _, err := time.LoadLocation(tz); err != nil || tz == "Local" {
		return nil, fmt.Errorf("schedule '%s': spec.schedules.timeZone %q is not an IANA time zone (e.g. Europe/Berlin, UTC)", s.Name, tz)
	}
	if strings.HasPrefix(strings.TrimSpace(s.Cron), "CRON_TZ=") || strings.HasPrefix(strings.TrimSpace(s.Cron), "TZ=") {
		return nil, fmt.Errorf("schedule '%s': spec.schedules.cron %q: set the zone in timeZone, not in the expression", s.Name, s.Cron)
	}
	sched, err := cron.ParseStandard("CRON_TZ=" + tz + " " + s.Cron)
	if err != nil {
		return nil, fmt.Errorf("schedule '%s': spec.schedules.cron %q: %v", s.Name, s.Cron, err)
	}
	// A day that never comes ("0 0 30 2 *") is a mistake, and costly: the
	// cron library gives up only after searching five years, on every
	// window walked. Every day of the calendar comes within five years of
	// neverFiresProbe, February 29th included.
	if sched.Next(neverFiresProbe).IsZero() {
		return nil, fmt.Errorf("schedule '%s': spec.schedules.cron %q never starts a window (no such day): check the day of month and month",
			s.Name, s.Cron)
	}
	if s.Duration.Duration <= 0 {
		return nil, fmt.Errorf("schedule '%s': spec.schedules.duration must be positive", s.Name)
	}
	return sched, nil
}

var neverFiresProbe = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// maxWindows bounds the walk over overlapping windows (a window longer than
// the schedule's period).
const maxWindows = 10000

func scheduleWindows(schedules []gatingv1alpha1.GateSchedule, now time.Time) ([]window, []string) {
	var out []window
	var invalid []string
	for _, s := range schedules {
		sched, err := parseSchedule(s)
		if err != nil {
			invalid = append(invalid, err.Error())
			continue
		}
		w := window{name: s.Name, action: s.Action, nextStart: sched.Next(now)}
		// Windows that started at most a duration ago are running; the
		// latest end among them is when the schedule lets go.
		for start, n := sched.Next(now.Add(-s.Duration.Duration)), 0; !start.IsZero() && !start.After(now) && n < maxWindows; start, n = sched.Next(start), n+1 {
			if end := start.Add(s.Duration.Duration); end.After(now) {
				w.running = true
				if end.After(w.end) {
					w.end = end
				}
			}
		}
		out = append(out, w)
	}
	return out, invalid
}

// nextBoundaryAfter is the first time after t a schedule window starts or
// ends: where a request without a window stops overriding the schedules.
func nextBoundaryAfter(schedules []gatingv1alpha1.GateSchedule, t time.Time) *time.Time {
	var next *time.Time
	consider := func(c time.Time) {
		if c.After(t) && (next == nil || c.Before(*next)) {
			next = &c
		}
	}
	for _, w := range mustWindows(schedules, t) {
		consider(w.nextStart)
		if w.running {
			consider(w.end)
		}
	}
	return next
}

func mustWindows(schedules []gatingv1alpha1.GateSchedule, t time.Time) []window {
	w, _ := scheduleWindows(schedules, t)
	return w
}
