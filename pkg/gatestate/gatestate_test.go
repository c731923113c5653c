package gatestate

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

var noDeployFriday = gatingv1alpha1.GateSchedule{Name: "no-deploy-friday", Cron: "0 0 * * FRI", TimeZone: "Europe/Berlin",
	Duration: metav1.Duration{Duration: 72 * time.Hour}, Action: gatingv1alpha1.ActionClose}

func TestEvaluate(t *testing.T) {
	const now = "2026-11-23T12:00:00Z" // a Monday
	open := func(v string) map[string]string { return map[string]string{gatingv1alpha1.OpenRequestAnnotation: v} }
	cases := []struct {
		name       string
		spec       gatingv1alpha1.GateSpec
		ann        map[string]string
		now        string
		wantOpen   bool
		wantReason string
		wantMsg    string // substring
		wantUntil  string // "" for none
		wantNext   string
		problems   int
	}{
		{name: "closed by default", spec: gatingv1alpha1.GateSpec{Default: "closed"}, now: now,
			wantReason: "Default", wantMsg: "Gate closed by default", wantNext: "2026-11-23T12:01:00Z"},
		{name: "an empty default is closed", spec: gatingv1alpha1.GateSpec{}, now: now,
			wantReason: "Default", wantMsg: "Gate closed by default", wantNext: "2026-11-23T12:01:00Z"},
		{name: "opened by default, re-evaluated at its interval", spec: gatingv1alpha1.GateSpec{Default: "opened", Interval: dur(10 * time.Minute)}, now: now,
			wantOpen: true, wantReason: "Default", wantMsg: "Gate opened by default", wantNext: "2026-11-23T12:10:00Z"},
		{name: "an open request within its window opens until the window ends",
			spec: gatingv1alpha1.GateSpec{Default: "closed", Window: dur(time.Hour), Interval: dur(time.Hour)},
			ann:  open("2026-11-23T11:30:00Z"), now: now, wantOpen: true, wantReason: "OpenRequested",
			wantMsg: "Gate scheduled for closing at 2026-11-23T12:30:00Z", wantUntil: "2026-11-23T12:30:00Z", wantNext: "2026-11-23T12:30:00Z"},
		{name: "an open request past its window is over",
			spec: gatingv1alpha1.GateSpec{Default: "closed", Window: dur(time.Hour)},
			ann:  open("2026-11-23T10:00:00Z"), now: now, wantReason: "Default", wantMsg: "Gate closed by default", wantNext: "2026-11-23T12:01:00Z"},
		{name: "a request without a window lasts", spec: gatingv1alpha1.GateSpec{Default: "closed"},
			ann: open("2026-11-01T00:00:00Z"), now: now, wantOpen: true, wantReason: "OpenRequested", wantMsg: "Gate open requested", wantNext: "2026-11-23T12:01:00Z"},
		{name: "the newest request wins", spec: gatingv1alpha1.GateSpec{Default: "opened"},
			ann: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T10:00:00Z", gatingv1alpha1.CloseRequestAnnotation: "2026-11-23T10:05:00Z"},
			now: now, wantReason: "CloseRequested", wantMsg: "Gate close requested", wantNext: "2026-11-23T12:01:00Z"},
		{name: "a malformed request is ignored and named", spec: gatingv1alpha1.GateSpec{Default: "closed"},
			ann: open("yesterday"), now: now, wantReason: "Default", wantMsg: "Gate closed by default", wantNext: "2026-11-23T12:01:00Z", problems: 1},
		{name: "a request in the future is not in force yet, and is evaluated when it starts",
			spec: gatingv1alpha1.GateSpec{Default: "closed", Interval: dur(time.Hour)},
			ann:  open("2026-11-23T12:20:00Z"), now: now, wantReason: "Default", wantMsg: "Gate closed by default", wantNext: "2026-11-23T12:20:00Z"},
		{name: "an open request with a close request timed later (gate open --for 30m): open now, closed from then",
			spec: gatingv1alpha1.GateSpec{Default: "closed", Interval: dur(time.Hour)},
			ann: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T11:50:00Z",
				gatingv1alpha1.CloseRequestAnnotation: "2026-11-23T12:20:00Z"},
			now: now, wantOpen: true, wantReason: "OpenRequested", wantMsg: "Gate open requested", wantNext: "2026-11-23T12:20:00Z"},
		{name: "... and once the close request's time has come, closed",
			spec: gatingv1alpha1.GateSpec{Default: "closed", Interval: dur(time.Hour)},
			ann: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T11:50:00Z",
				gatingv1alpha1.CloseRequestAnnotation: "2026-11-23T12:20:00Z"},
			now: "2026-11-23T12:20:00Z", wantReason: "CloseRequested", wantMsg: "Gate close requested", wantNext: "2026-11-23T13:20:00Z"},
		{name: "No Deploy Friday closes on Friday in Berlin until Monday 00:00 Berlin",
			spec: gatingv1alpha1.GateSpec{Default: "opened", Interval: dur(24 * time.Hour), Schedules: []gatingv1alpha1.GateSchedule{noDeployFriday}},
			now:  "2026-11-27T12:00:00Z", wantReason: "Scheduled",
			wantMsg:   "Closed by schedule 'no-deploy-friday' until 2026-11-29T23:00:00Z",
			wantUntil: "2026-11-29T23:00:00Z", wantNext: "2026-11-28T12:00:00Z"},
		{name: "before Friday the gate is open and re-evaluated when the window starts (Thursday 23:00 UTC)",
			spec: gatingv1alpha1.GateSpec{Default: "opened", Interval: dur(24 * time.Hour), Schedules: []gatingv1alpha1.GateSchedule{noDeployFriday}},
			now:  "2026-11-26T12:00:00Z", wantOpen: true, wantReason: "Default", wantNext: "2026-11-26T23:00:00Z"},
		{name: "a request overrides a running schedule until the schedule's next boundary",
			spec: gatingv1alpha1.GateSpec{Default: "opened", Interval: dur(24 * time.Hour), Schedules: []gatingv1alpha1.GateSchedule{noDeployFriday}},
			ann:  open("2026-11-27T13:00:00Z"), now: "2026-11-27T14:00:00Z", wantOpen: true, wantReason: "OpenRequested",
			wantMsg: "Gate open requested until 2026-11-29T23:00:00Z", wantUntil: "2026-11-29T23:00:00Z", wantNext: "2026-11-28T14:00:00Z"},
		{name: "an unreadable schedule closes the gate and says why",
			spec: gatingv1alpha1.GateSpec{Default: "opened", Schedules: []gatingv1alpha1.GateSchedule{{Name: "typo", Cron: "0 0 * * FRI",
				TimeZone: "Europe/Berlinn", Duration: metav1.Duration{Duration: time.Hour}, Action: "close"}}},
			now: now, wantReason: "InvalidSchedule", wantMsg: `spec.schedules.timeZone "Europe/Berlinn" is not an IANA time zone`, wantNext: "2026-11-23T12:01:00Z"},
		{name: "a bad cron expression closes the gate and says why",
			spec: gatingv1alpha1.GateSpec{Default: "opened", Schedules: []gatingv1alpha1.GateSchedule{{Name: "typo", Cron: "0 0 * FRI",
				Duration: metav1.Duration{Duration: time.Hour}, Action: "close"}}},
			now: now, wantReason: "InvalidSchedule", wantMsg: `schedule 'typo': spec.schedules.cron "0 0 * FRI"`, wantNext: "2026-11-23T12:01:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := Evaluate(tc.spec, tc.ann, at(tc.now))
			if e.Open != tc.wantOpen || e.Reason != tc.wantReason || !strings.Contains(e.Message, tc.wantMsg) {
				t.Errorf("got open=%v reason=%s message=%q; want open=%v reason=%s message containing %q",
					e.Open, e.Reason, e.Message, tc.wantOpen, tc.wantReason, tc.wantMsg)
			}
			switch {
			case tc.wantUntil == "" && e.Until != nil:
				t.Errorf("until = %s, want none", e.Until.UTC().Format(time.RFC3339))
			case tc.wantUntil != "" && (e.Until == nil || !e.Until.Equal(at(tc.wantUntil))):
				t.Errorf("until = %v, want %s", e.Until, tc.wantUntil)
			}
			if !e.Next.Equal(at(tc.wantNext)) {
				t.Errorf("next evaluation = %s, want %s", e.Next.UTC().Format(time.RFC3339), tc.wantNext)
			}
			if len(e.Problems) != tc.problems {
				t.Errorf("problems = %q, want %d", e.Problems, tc.problems)
			}
		})
	}
}

// The request the API server stored last is in force: every writer
// replaces the opposite request, so the one left is the latest, whatever
// its stamp says against the request the status says was applied (the
// CLI stamps with the hub's Date header, to the second, after a webhook
// stamped to the nanosecond; a hub's clock may step back).
func TestAtTheRequestStoredLastIsInForce(t *testing.T) {
	applied := metav1.NewTime(at("2026-11-23T10:10:00.7Z"))
	g := &gatingv1alpha1.Gate{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{gatingv1alpha1.CloseRequestAnnotation: "2026-11-23T10:10:00Z"}},
		Spec:       gatingv1alpha1.GateSpec{Default: "opened"},
		Status: gatingv1alpha1.GateStatus{RequestedAt: &applied, Conditions: []metav1.Condition{{Type: gatingv1alpha1.ConditionOpened,
			Status: metav1.ConditionTrue, Reason: gatingv1alpha1.ReasonOpenRequested, Message: "Gate open requested"}}},
	}
	if e := At(g, at("2026-11-23T12:00:00Z")); e.Open || e.Reason != ReasonCloseRequested {
		t.Errorf("a close stored after the open applied at %s: open=%v %s %q; want closed by the request",
			applied.UTC().Format(time.RFC3339Nano), e.Open, e.Reason, e.Message)
	}
}

// A request timed later than the clock that evaluates it is not in force
// yet; the gate's Opened message names it and when it comes into force, so
// a person sees why a request made does not act (a hand-written time, or a
// writer's clock ahead). Within FutureTolerance (clocks of the hub a
// second or two apart) it is not worth a word.
func TestFutureRequestsAreNamed(t *testing.T) {
	const now = "2026-11-23T12:00:00Z"
	closed := gatingv1alpha1.GateSpec{Default: "closed"}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		wantOpen bool
		wantMsg  string // the whole message
	}{
		{name: "an open request stamped in the future",
			ann:     map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T12:05:00Z"},
			wantMsg: "Gate closed by default; open.gate.federator.dev/requestedAt is timed later: in force from 2026-11-23T12:05:00Z"},
		{name: "gate open --for 1h: the close request to come",
			ann: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T11:00:00Z",
				gatingv1alpha1.CloseRequestAnnotation: "2026-11-23T13:00:00Z"},
			wantOpen: true, wantMsg: "Gate open requested; close.gate.federator.dev/requestedAt is timed later: in force from 2026-11-23T13:00:00Z"},
		{name: "a request a second ahead (the hub's clocks apart) is not worth a word",
			ann:     map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T12:00:01Z"},
			wantMsg: "Gate closed by default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Evaluate(closed, tc.ann, at(now))
			if e.Open != tc.wantOpen || e.Message != tc.wantMsg {
				t.Errorf("open=%v %q; want open=%v %q", e.Open, e.Message, tc.wantOpen, tc.wantMsg)
			}
		})
	}
}

// A daily 09:00 maintenance window follows local time across the
// daylight-saving change, in two zones that change on different days.
func TestEvaluateAcrossDaylightSaving(t *testing.T) {
	for _, tc := range []struct {
		zone                         string
		before, after                string // 09:15 local the day before and after the change, in UTC
		afterAtOldHour               string // 09:15 of the old offset, after the change: 10:15 local
		beforeWindowEnd, afterWinEnd string
	}{
		{"Europe/Berlin", "2026-03-28T08:15:00Z", "2026-03-30T07:15:00Z", "2026-03-30T08:15:00Z", "2026-03-28T09:00:00Z", "2026-03-30T08:00:00Z"},
		{"America/New_York", "2026-03-07T14:15:00Z", "2026-03-09T13:15:00Z", "2026-03-09T14:15:00Z", "2026-03-07T15:00:00Z", "2026-03-09T14:00:00Z"},
	} {
		t.Run(tc.zone, func(t *testing.T) {
			spec := gatingv1alpha1.GateSpec{Default: "closed", Schedules: []gatingv1alpha1.GateSchedule{{Name: "maintenance",
				Cron: "0 9 * * *", TimeZone: tc.zone, Duration: metav1.Duration{Duration: time.Hour}, Action: "open"}}}
			for _, c := range []struct {
				now, until string
				open       bool
			}{{tc.before, tc.beforeWindowEnd, true}, {tc.after, tc.afterWinEnd, true}, {tc.afterAtOldHour, "", false}} {
				e := Evaluate(spec, nil, at(c.now))
				if e.Open != c.open {
					t.Errorf("at %s: open = %v (%s), want %v", c.now, e.Open, e.Message, c.open)
				}
				if c.until != "" && (e.Until == nil || !e.Until.Equal(at(c.until))) {
					t.Errorf("at %s: until = %v, want %s", c.now, e.Until, c.until)
				}
			}
		})
	}
}

// NextChange is when what waits for a gate must look again: only instants
// where the state can change by itself, never the interval.
func TestNextChange(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec gatingv1alpha1.GateSpec
		ann  map[string]string
		now  string
		want string // "" for none
	}{
		{name: "a gate with neither request nor schedule never changes by itself",
			spec: gatingv1alpha1.GateSpec{Default: "closed"}, now: "2026-11-23T12:00:00Z"},
		{name: "an open request with a window changes when the window ends",
			spec: gatingv1alpha1.GateSpec{Default: "closed", Window: dur(time.Hour)},
			ann:  map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T11:30:00Z"},
			now:  "2026-11-23T12:00:00Z", want: "2026-11-23T12:30:00Z"},
		{name: "gate open --for 20m changes when its close request comes into force",
			spec: gatingv1alpha1.GateSpec{Default: "closed"},
			ann: map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T11:50:00Z",
				gatingv1alpha1.CloseRequestAnnotation: "2026-11-23T12:10:00Z"},
			now: "2026-11-23T12:00:00Z", want: "2026-11-23T12:10:00Z"},
		{name: "an open gate before a closing schedule changes when the window starts",
			spec: gatingv1alpha1.GateSpec{Default: "opened", Schedules: []gatingv1alpha1.GateSchedule{noDeployFriday}},
			now:  "2026-11-26T12:00:00Z", want: "2026-11-26T23:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Evaluate(tc.spec, tc.ann, at(tc.now))
			switch {
			case tc.want == "" && e.NextChange != nil:
				t.Errorf("next change = %s, want none", e.NextChange.UTC().Format(time.RFC3339))
			case tc.want != "" && (e.NextChange == nil || !e.NextChange.Equal(at(tc.want))):
				t.Errorf("next change = %v, want %s", e.NextChange, tc.want)
			}
		})
	}
}
