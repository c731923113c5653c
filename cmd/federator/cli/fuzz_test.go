package cli

import (
	"strings"
	"testing"
	"time"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/internal/fuzztest"
	"github.com/federator-dev/federator/pkg/gatestate"
)

// FuzzGateFor: `federator gate open|close NAME --for DURATION`, over a gate
// that may carry a pending opposite request. A --for that is refused names
// the flag and changes nothing. One accepted writes the request at the
// time now and, for a positive duration, the opposite request that long
// after, both read back by the gate controllers' own parser to the
// instant meant, so the gate is in the state asked now and flips back
// then; without a duration, no opposite request is left at all: a new
// request replaces the previous one, so none can win against it by its
// stamp.
func FuzzGateFor(f *testing.F) {
	for _, seed := range []struct {
		duration string
		open     bool
		pending  string
	}{
		{"1h", true, ""}, {"30m", false, ""}, {"0", true, "2026-03-01T12:30:00Z"}, {"", false, "2026-03-01T12:30:00Z"},
		{"-5m", true, ""}, {"1d", true, ""}, {"1ns", false, ""}, {"2562047h", true, ""}, {"2562048h", true, ""},
		{"1h", true, "2026-03-01T11:00:00Z"}, {"0s", false, "garbage"}, {"+90m", true, ""}, {".5h", false, ""},
	} {
		f.Add(seed.duration, seed.open, seed.pending)
	}
	f.Fuzz(func(t *testing.T, duration string, open bool, pending string) {
		action, key, opposite := "open", gatingv1alpha1.OpenRequestAnnotation, gatingv1alpha1.CloseRequestAnnotation
		if !open {
			action, key, opposite = "close", gatingv1alpha1.CloseRequestAnnotation, gatingv1alpha1.OpenRequestAnnotation
		}
		// What the API server stores is JSON: valid UTF-8.
		pending = strings.ToValidUTF8(pending, "\uFFFD")
		var before map[string]string
		if pending != "" {
			before = map[string]string{opposite: pending}
		}
		h := newTestHub(t, gate("approval", before))
		args := []string{"gate", action, "approval"}
		if duration != "" {
			args = append(args, "--for="+duration)
		}
		_, _, err := run(t, h, args...)
		after := gateAnnotations(t, h, "approval")
		if err != nil {
			fuzztest.Explains(t, err.Error(), "--for")
			if len(after) != len(before) || after[opposite] != pending {
				t.Fatalf("refused --for=%q changed the gate: %v", duration, after)
			}
			return
		}
		dur := time.Duration(0)
		if duration != "" {
			if dur, err = time.ParseDuration(duration); err != nil || dur < 0 {
				t.Fatalf("--for=%q accepted: %v, %s", duration, err, dur)
			}
		}
		now := testNow.UTC()
		requested, err := gatestate.RequestTime(key, after[key])
		if err != nil || !requested.Equal(now) {
			t.Fatalf("%s = %q reads as %s, %v; want the time now %s", key, after[key], requested, err, now)
		}
		spec := gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Closed}
		if !open {
			spec.Default = gatingv1alpha1.Opened
		}
		if e := gatestate.Evaluate(spec, after, now); e.Open != open {
			t.Fatalf("after gate %s %v, the gate is open=%v: %s", action, args[3:], e.Open, e.Message)
		}
		flipBack, err := gatestate.RequestTime(opposite, after[opposite])
		switch {
		case dur > 0:
			if err != nil || !flipBack.Equal(now.Add(dur)) {
				t.Fatalf("--for=%s: %s = %q reads as %s, %v; want %s", duration, opposite, after[opposite], flipBack, err, now.Add(dur))
			}
			if e := gatestate.Evaluate(spec, after, flipBack); e.Open == open {
				t.Fatalf("--for=%s: at %s the gate is still open=%v: %s", duration, flipBack, e.Open, e.Message)
			}
		default:
			if v, left := after[opposite]; left {
				t.Fatalf("gate %s without --for left %s = %q: a new request replaces the previous one", action, opposite, v)
			}
		}
	})
}
