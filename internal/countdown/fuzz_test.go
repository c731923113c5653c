package countdown

import (
	"fmt"
	"strings"
	"testing"
	"time"

	policykeys "github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fuzztest"
)

// FuzzDeletionDelay: a deletion delay (annotation federator.dev/deletion-delay)
// is accepted only as a Go duration, zero or positive; what is accepted
// round-trips through its printed form, the value honoured is never above
// --max-deletion-delay, and what member copies carry reads back as the
// same delay. A refusal names the value, where it is set, and what to
// write instead, and deletes nothing (Problem set).
func FuzzDeletionDelay(f *testing.F) {
	for _, seed := range []struct {
		raw string
		max time.Duration
	}{
		{"24h", DefaultMaxDelay}, {"90m", 0}, {"0", DefaultMaxDelay}, {"0s", time.Hour}, {"1000h", DefaultMaxDelay},
		{"-5m", DefaultMaxDelay}, {"24 hours", DefaultMaxDelay}, {"0x10", 0}, {"", DefaultMaxDelay}, {"1.5h", time.Minute},
		{"+3m", time.Hour}, {"9223372036854775807ns", DefaultMaxDelay}, {"2562048h", 0}, {" 24h", DefaultMaxDelay}, {"1d", 0},
	} {
		f.Add(seed.raw, int64(seed.max))
	}
	f.Fuzz(func(t *testing.T, raw string, maxDelay int64) {
		max := time.Duration(maxDelay)
		d, err := Parse(raw)
		if err != nil {
			fuzztest.Explains(t, err.Error(), fmt.Sprintf("%q", raw), "Go duration")
		} else {
			if d < 0 {
				t.Fatalf("Parse(%q) = %s: a negative delay was accepted", raw, d)
			}
			if back, err := Parse(d.String()); err != nil || back != d {
				t.Fatalf("Parse(%q) = %s, but its printed form %q reads back as %s, %v", raw, d, d.String(), back, err)
			}
		}

		template := Source{Name: "Deployment demo/web", Annotations: map[string]string{policykeys.DeletionDelayAnnotation: raw}}
		policy := Source{Name: "PropagationPolicy demo/web", Annotations: map[string]string{policykeys.DeletionDelayAnnotation: "1h"}}
		delay := Effective(template, policy, max)
		if !delay.Set || delay.From != template.Name || delay.Raw != raw {
			t.Fatalf("Effective = %+v: the template's own value must win over its policy's", delay)
		}
		if delay.Problem != "" {
			if err == nil {
				t.Fatalf("Effective refuses %q (%s) that Parse accepts", raw, delay.Problem)
			}
			msg := delay.Message(max)
			fuzztest.Explains(t, msg, "deletion delay", template.Name, fmt.Sprintf("%q", raw), "nothing is deleted")
			if delay.ManifestValue() != raw {
				t.Fatalf("ManifestValue = %q, want the raw %q so the dispatcher refuses it too and keeps the object", delay.ManifestValue(), raw)
			}
			return
		}
		if err != nil {
			t.Fatalf("Effective honours %q that Parse refuses: %v", raw, err)
		}
		if max > 0 && delay.Value > max {
			t.Fatalf("Effective(%q, max %s) = %s, above the maximum", raw, max, delay.Value)
		}
		if delay.Capped != (max > 0 && d > max) {
			t.Fatalf("Effective(%q, max %s): Capped = %v", raw, max, delay.Capped)
		}
		// What the member copy carries is what the dispatcher counts down.
		onMember, err := Parse(delay.ManifestValue())
		if err != nil || onMember != delay.Value {
			t.Fatalf("member copies carry %q, which reads as %s, %v; want %s", delay.ManifestValue(), onMember, err, delay.Value)
		}
		if msg := delay.Message(max); !strings.Contains(msg, template.Name) {
			t.Fatalf("Message %q does not say where the delay is set", msg)
		}
	})
}
