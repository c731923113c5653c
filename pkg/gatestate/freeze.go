package gatestate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

// What a Freeze holds at an instant: a pure function of the freezes the
// hub stores and the time, which every dispatcher evaluates before each
// write to a member.

// FreezeEnds is when f ends by itself: spec.duration after the hub stored
// it (its creationTimestamp, stamped by the hub's API server); the zero
// time when it lasts until deleted.
func FreezeEnds(f *gatingv1alpha1.Freeze) time.Time {
	if f.Spec.Duration == nil {
		return time.Time{}
	}
	return f.CreationTimestamp.Add(f.Spec.Duration.Duration)
}

// FreezeHolds is whether f holds cluster at now: it names cluster, or no
// cluster (every member), is not being deleted, and has not ended.
func FreezeHolds(f *gatingv1alpha1.Freeze, cluster string, now time.Time) bool {
	if !f.DeletionTimestamp.IsZero() {
		return false
	}
	if len(f.Spec.Clusters) > 0 && !slices.Contains(f.Spec.Clusters, cluster) {
		return false
	}
	end := FreezeEnds(f)
	return end.IsZero() || now.Before(end)
}

// Frozen is the freeze of freezes that holds cluster at now, nil when
// none does. Of several, the one that ends last (one without a duration
// before any with one), then by name: the message names what holds the
// member longest.
func Frozen(freezes []gatingv1alpha1.Freeze, cluster string, now time.Time) *gatingv1alpha1.Freeze {
	var found *gatingv1alpha1.Freeze
	for i := range freezes {
		f := &freezes[i]
		if !FreezeHolds(f, cluster, now) {
			continue
		}
		if found == nil || endsLater(f, found) {
			found = f
		}
	}
	return found
}

func endsLater(a, b *gatingv1alpha1.Freeze) bool {
	ea, eb := FreezeEnds(a), FreezeEnds(b)
	switch {
	case ea.Equal(eb):
		return a.Name < b.Name
	case ea.IsZero():
		return true
	case eb.IsZero():
		return false
	}
	return ea.After(eb)
}

// NextFreezeEnd is the earliest instant after now at which a freeze of
// freezes that holds some member ends by itself; the zero time when none
// will.
func NextFreezeEnd(freezes []gatingv1alpha1.Freeze, now time.Time) time.Time {
	var next time.Time
	for i := range freezes {
		end := FreezeEnds(&freezes[i])
		if end.IsZero() || !end.After(now) || !freezes[i].DeletionTimestamp.IsZero() {
			continue
		}
		if next.IsZero() || end.Before(next) {
			next = end
		}
	}
	return next
}

// FreezeMessage says, for a person, what f holds and until when: "Freeze
// incident-42 holds every write to member2: rollback of payments (until
// 2026-12-02T10:00:00Z); `federator unfreeze` lifts it".
func FreezeMessage(f *gatingv1alpha1.Freeze, cluster string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Freeze %s holds every write to %s", f.Name, cluster)
	if f.Spec.Message != "" {
		fmt.Fprintf(&b, ": %s", f.Spec.Message)
	}
	if end := FreezeEnds(f); !end.IsZero() {
		fmt.Fprintf(&b, " (until %s)", end.UTC().Format(time.RFC3339))
	}
	b.WriteString("; `federator unfreeze` lifts it")
	return b.String()
}
