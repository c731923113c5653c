package gatestate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/internal/fuzztest"
)

// fuzzEpoch is the clock of the fuzz targets, moved by up to fuzzSpan
// either way, so the clock stays where gates live.
var fuzzEpoch = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

const fuzzSpan = 50 * 365 * 24 * time.Hour

func fuzzClock(offset int64) time.Time {
	return fuzzEpoch.Add(time.Duration(offset % int64(fuzzSpan)))
}

// checkEvaluation asserts what every evaluation promises, whatever the input:
// a known reason and a message, and every time it names after now.
func checkEvaluation(t *testing.T, e Evaluation, now time.Time) {
	t.Helper()
	switch e.Reason {
	case ReasonDefault, ReasonOpenRequested, ReasonCloseRequested, ReasonScheduled, ReasonInvalid:
	default:
		t.Fatalf("reason %q is none of the Opened condition's reasons", e.Reason)
	}
	if e.Message == "" {
		t.Fatalf("evaluation %+v says nothing", e)
	}
	if !e.Next.After(now) {
		t.Fatalf("Next %s is not after now %s: the gate would be evaluated in a loop", e.Next, now)
	}
	if e.Until != nil && !e.Until.After(now) {
		t.Fatalf("Until %s is not after now %s", e.Until, now)
	}
	if e.NextChange != nil && !e.NextChange.After(now) {
		t.Fatalf("NextChange %s is not after now %s", e.NextChange, now)
	}
	if e.Reason == ReasonInvalid && e.Open {
		t.Fatalf("a schedule that cannot be read opened the gate: %s", e.Message)
	}
}

// FuzzGateRequests: the request annotations open.gate.federator.dev/requestedAt
// and close.gate.federator.dev/requestedAt. A malformed value is ignored,
// named with its annotation and what to write; a well-formed one reads back
// as the time it was written with; the newest request in force decides,
// close on a tie; and no evaluation names a time at or before now.
func FuzzGateRequests(f *testing.F) {
	f.Add("2026-11-23T11:30:00Z", "", int64(0), int64(0), false)
	f.Add("2026-11-23T11:50:00Z", "2026-11-23T12:20:00Z", int64(0), int64(time.Hour), false)
	f.Add("2026-11-23T10:00:00Z", "2026-11-23T10:00:00Z", int64(0), int64(0), true)
	f.Add("yesterday", "2026-11-23T10:00:00.123456789+02:00", int64(time.Hour), int64(0), true)
	f.Add(" 2026-11-23T10:00:00Z\n", "", int64(0), int64(-time.Minute), false)
	f.Add("", "0000-01-01T00:00:00Z", int64(-1), int64(1), false)
	f.Add("9999-12-31T23:59:59Z", "2026-11-23T12:00:00Z", int64(0), int64(0), true)
	f.Add("2026-02-30T10:00:00Z", "2026-11-23T24:00:00Z", int64(0), int64(0), false)
	f.Fuzz(func(t *testing.T, openValue, closeValue string, nowOffset, windowNanos int64, defaultOpen bool) {
		now := fuzzClock(nowOffset)
		spec := gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Closed}
		if defaultOpen {
			spec.Default = gatingv1alpha1.Opened
		}
		if windowNanos != 0 {
			spec.Window = &metav1.Duration{Duration: time.Duration(windowNanos)}
		}
		annotations := map[string]string{}
		if openValue != "" {
			annotations[gatingv1alpha1.OpenRequestAnnotation] = openValue
		}
		if closeValue != "" {
			annotations[gatingv1alpha1.CloseRequestAnnotation] = closeValue
		}

		type parsed struct {
			open bool
			at   time.Time
		}
		var inForce []parsed
		malformed := 0
		for key, v := range annotations {
			at, err := RequestTime(key, v)
			if err != nil {
				malformed++
				fuzztest.Explains(t, err.Error(), "annotation "+key, fmt.Sprintf("%q", v), "RFC 3339")
				continue
			}
			// What a writer stamps reads back as the same instant.
			for _, layout := range []string{time.RFC3339Nano, time.RFC3339} {
				stamped := at.Truncate(time.Second).Format(layout)
				if back, err := RequestTime(key, stamped); err == nil && !back.Equal(at.Truncate(time.Second)) {
					t.Fatalf("%q written as %q reads back as %s", v, stamped, back)
				}
			}
			if !at.After(now) {
				inForce = append(inForce, parsed{open: key == gatingv1alpha1.OpenRequestAnnotation, at: at})
			}
		}

		e := Evaluate(spec, annotations, now)
		checkEvaluation(t, e, now)
		if len(e.Problems) != malformed {
			t.Fatalf("%d malformed requests, %d problems: %q", malformed, len(e.Problems), e.Problems)
		}
		for _, p := range e.Problems {
			fuzztest.Explains(t, p, "the request is ignored")
		}
		if spec.Window != nil && spec.Window.Duration > 0 {
			return // a request may have ended by itself; TestEvaluate covers windows
		}
		switch {
		case len(inForce) == 0:
			if e.Request != nil || e.Open != defaultOpen {
				t.Fatalf("no request in force, yet %+v", e)
			}
		case len(inForce) == 2 && inForce[0].at.Equal(inForce[1].at):
			if e.Open {
				t.Fatalf("open and close requested at the same instant %s opened the gate; close wins a tie", inForce[0].at)
			}
		default:
			newest := inForce[0]
			if len(inForce) == 2 && inForce[1].at.After(newest.at) {
				newest = inForce[1]
			}
			if e.Request == nil || e.Open != newest.open || !e.Request.At.Equal(newest.at) {
				t.Fatalf("the newest request %+v is not in force: %+v", newest, e)
			}
		}
	})
}

// FuzzGateSchedule: a schedule (spec.schedules: cron, timeZone, duration)
// is read in its IANA time zone or refused with a message that names the
// schedule, the field and the value, and a refused schedule closes the
// gate. An accepted schedule's next window starts after now on a whole
// minute of its zone, and a running window ends within its duration.
func FuzzGateSchedule(f *testing.F) {
	f.Add("0 0 * * FRI", "Europe/Berlin", int64(72*time.Hour), int64(0), true)
	f.Add("30 2 * * *", "America/New_York", int64(time.Hour), int64(0), false)
	f.Add("*/15 9-17 * * MON-FRI", "", int64(10*time.Minute), int64(time.Hour), false)
	f.Add("@every 1h", "Asia/Kolkata", int64(time.Minute), int64(0), false)
	f.Add("@daily", "Australia/Lord_Howe", int64(24*time.Hour), int64(0), false)
	f.Add("CRON_TZ=Asia/Tokyo 0 9 * * *", "", int64(time.Hour), int64(0), true)
	f.Add("0 9 * * *", "Mars/Olympus", int64(time.Hour), int64(0), true)
	f.Add("60 25 * * *", "UTC", int64(time.Hour), int64(0), true)
	f.Add("0 9 * *", "UTC", int64(0), int64(0), false)
	f.Add("* * * * *", "Pacific/Chatham", int64(-time.Hour), int64(0), false)
	f.Fuzz(func(t *testing.T, cronExpr, zone string, durationNanos, nowOffset int64, closeAction bool) {
		now := fuzzClock(nowOffset)
		s := gatingv1alpha1.GateSchedule{Name: "window", Cron: cronExpr, TimeZone: zone,
			Duration: metav1.Duration{Duration: time.Duration(durationNanos)}, Action: gatingv1alpha1.ActionOpen}
		if closeAction {
			s.Action = gatingv1alpha1.ActionClose
		}
		spec := gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Opened, Schedules: []gatingv1alpha1.GateSchedule{s}}
		sched, err := parseSchedule(s)
		e := Evaluate(spec, nil, now)
		checkEvaluation(t, e, now)
		if err != nil {
			fuzztest.Explains(t, err.Error(), "schedule 'window'", "spec.schedules.")
			if !strings.Contains(err.Error(), "spec.schedules.duration") && !strings.Contains(err.Error(), fmt.Sprintf("%q", cronExpr)) &&
				!strings.Contains(err.Error(), fmt.Sprintf("%q", zone)) {
				t.Fatalf("refusal %q quotes neither the cron expression nor the time zone", err)
			}
			if e.Open || e.Reason != ReasonInvalid || !strings.Contains(e.Message, err.Error()) {
				t.Fatalf("a schedule that cannot be read must close the gate and say why: %+v", e)
			}
			return
		}
		name := zone
		if name == "" {
			name = "UTC"
		}
		loc, lerr := time.LoadLocation(name)
		if lerr != nil || loc.String() != name || name == "Local" {
			t.Fatalf("time zone %q accepted, but it is no IANA time zone (%v, %v)", zone, loc, lerr)
		}
		if s.Duration.Duration <= 0 {
			t.Fatalf("duration %s accepted", s.Duration.Duration)
		}
		next := sched.Next(now)
		if !next.After(now) {
			t.Fatalf("next window of %q in %s starts at %s, not after now %s", cronExpr, name, next, now)
		}
		if next.In(loc).Second() != 0 && !strings.HasPrefix(strings.TrimSpace(cronExpr), "@every") {
			t.Fatalf("next window of %q in %s starts at %s, not on a whole minute", cronExpr, name, next.In(loc))
		}
		if e.Reason == ReasonScheduled {
			if e.Until == nil || e.Until.Sub(now) > s.Duration.Duration {
				t.Fatalf("a running window of %s ends at %v, more than its duration from now %s", s.Duration.Duration, e.Until, now)
			}
			if e.Open != !closeAction {
				t.Fatalf("schedule with action %s left the gate open=%v", s.Action, e.Open)
			}
		}
	})
}
