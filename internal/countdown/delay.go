// Package countdown owns a deletion countdown from its mark to its
// tombstone to its end: which deletion delay is in force for a template
// and what a delay's value means (Parse, "0" is none, Capped, Delayed;
// pure), the member-side steps of starting and taking back a countdown
// (the federator.dev/deletion-timestamp mark), the tombstone on the hub
// that records it, the Works kept for Pull clusters while one runs
// (KeepWork), and how it ends (Decide, pure). The controllers act on it:
// the dispatcher starts countdowns and takes them back when an object is
// placed again, the binding controller keeps Pull clusters' Works,
// pkg/softdelete ends countdowns, and pkg/namespacesync keeps a member
// namespace while one runs in it.
package countdown

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// DefaultMaxDelay is --max-deletion-delay's default: thirty days.
const DefaultMaxDelay = 720 * time.Hour

// Parse reads a deletion delay: a Go duration, zero or positive. Zero
// means no delay.
func Parse(raw string) (time.Duration, error) {
	d, err := time.ParseDuration(raw)
	if err != nil {
		return 0, fmt.Errorf("%q is not a Go duration (e.g. 24h, 90m)", raw)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative: a delay is a positive Go duration (e.g. 24h, 90m)", raw)
	}
	return d, nil
}

// Capped is d capped at max (max <= 0: no cap), and whether it was.
func Capped(d, max time.Duration) (time.Duration, bool) {
	if max > 0 && d > max {
		return max, true
	}
	return d, false
}

// Source is one place a delay can be set: a template or its policy, by
// how a person names it ("Deployment demo/web"), with its annotations.
type Source struct {
	Name        string
	Annotations map[string]string
}

// Delay is the deletion delay in force for a template.
type Delay struct {
	// Set is false when neither the template nor its policy sets one.
	Set bool
	// From names where it is set.
	From string
	// Raw is the value as written there.
	Raw string
	// Value is the delay honoured; meaningful only when Problem is "".
	Value time.Duration
	// Problem says why Raw cannot be honoured; nothing is deleted while
	// there is one.
	Problem string
	// Capped is true when Raw was above the maximum and Value is the
	// maximum.
	Capped bool
}

// Effective is the delay in force: the template's own value, else its
// policy's default, capped at max (max <= 0: no cap).
func Effective(template, policy Source, max time.Duration) Delay {
	from := template
	raw, ok := template.Annotations[policykeys.DeletionDelayAnnotation]
	if !ok {
		from = policy
		if raw, ok = policy.Annotations[policykeys.DeletionDelayAnnotation]; !ok {
			return Delay{}
		}
	}
	d := Delay{Set: true, From: from.Name, Raw: raw}
	value, err := Parse(raw)
	if err != nil {
		d.Problem = fmt.Sprintf("deletion delay %s on %s: %v", raw, from.Name, err)
		return d
	}
	d.Value, d.Capped = Capped(value, max)
	return d
}

// ManifestValue is the annotation value member copies carry: the delay
// honoured, or the raw value when it cannot be honoured (so the
// dispatcher refuses it too and keeps the object); "" when none is set.
func (d Delay) ManifestValue() string {
	switch {
	case !d.Set:
		return ""
	case d.Problem != "" || !d.Capped:
		return d.Raw
	default:
		return d.Value.String()
	}
}

// Message says, for a condition or an event, what is in force and why.
func (d Delay) Message(max time.Duration) string {
	switch {
	case d.Problem != "":
		return d.Problem + "; nothing is deleted from a member until it is fixed or removed"
	case d.Capped:
		return fmt.Sprintf("deletion delay %s on %s is above --max-deletion-delay %s: %s is used", d.Raw, d.From, max, d.Value)
	default:
		return fmt.Sprintf("deletion delay %s from %s", d.Value, d.From)
	}
}

// Delayed says whether deleting manifest's object waits: it carries a
// deletion delay that is not zero (one that cannot be read waits too, for
// ever: bad input never deletes).
func Delayed(manifest metav1.Object) bool {
	raw, present := manifest.GetAnnotations()[policykeys.DeletionDelayAnnotation]
	return DelaysDeletion(raw, present)
}

// DelaysDeletion says whether a deletion-delay annotation makes a deletion
// wait, from its value and whether it is there at all: absent or "0" (any
// zero duration) does not; any other value does, one that cannot be read
// for ever (bad input never deletes).
func DelaysDeletion(raw string, present bool) bool {
	if d, err := Parse(raw); !present || err == nil && d == 0 {
		return false
	}
	return true
}
