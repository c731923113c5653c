package gatestate

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

func freezeAt(name string, stored time.Time, d time.Duration, clusters ...string) gatingv1alpha1.Freeze {
	f := gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(stored)},
		Spec: gatingv1alpha1.FreezeSpec{Clusters: clusters, Message: "incident " + name}}
	if d > 0 {
		f.Spec.Duration = &metav1.Duration{Duration: d}
	}
	return f
}

func TestAFreezeHoldsWhatItNamesUntilItEndsByTheHubsClock(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	deleting := freezeAt("deleting", t0, 0)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	for _, tc := range []struct {
		name    string
		freezes []gatingv1alpha1.Freeze
		cluster string
		now     time.Time
		want    string // the freeze that holds, "" none
	}{
		{"none", nil, "member1", t0, ""},
		{"every member, no end", []gatingv1alpha1.Freeze{freezeAt("all", t0, 0)}, "member1", t0.Add(24 * time.Hour), "all"},
		{"a member it names", []gatingv1alpha1.Freeze{freezeAt("two", t0, 0, "member2")}, "member2", t0, "two"},
		{"a member it does not name", []gatingv1alpha1.Freeze{freezeAt("two", t0, 0, "member2")}, "member1", t0, ""},
		{"within its duration", []gatingv1alpha1.Freeze{freezeAt("hour", t0, time.Hour)}, "member1", t0.Add(59 * time.Minute), "hour"},
		{"at its end: over", []gatingv1alpha1.Freeze{freezeAt("hour", t0, time.Hour)}, "member1", t0.Add(time.Hour), ""},
		{"being deleted: over", []gatingv1alpha1.Freeze{deleting}, "member1", t0, ""},
		{"the one that ends last", []gatingv1alpha1.Freeze{freezeAt("short", t0, time.Minute), freezeAt("long", t0, time.Hour)}, "member1", t0, "long"},
		{"one without an end before one with", []gatingv1alpha1.Freeze{freezeAt("a-hour", t0, time.Hour), freezeAt("b-ever", t0, 0)}, "member1", t0, "b-ever"},
		{"equal ends: by name", []gatingv1alpha1.Freeze{freezeAt("b", t0, 0), freezeAt("a", t0, 0)}, "member1", t0, "a"},
		{"an ended one beside one in force", []gatingv1alpha1.Freeze{freezeAt("old", t0.Add(-2*time.Hour), time.Hour), freezeAt("new", t0, time.Minute, "member1")}, "member1", t0, "new"},
	} {
		got := ""
		if f := Frozen(tc.freezes, tc.cluster, tc.now); f != nil {
			got = f.Name
		}
		if got != tc.want {
			t.Errorf("%s: Frozen = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTheNextFreezeEndIsTheEarliestToCome(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	freezes := []gatingv1alpha1.Freeze{freezeAt("ever", t0, 0), freezeAt("ended", t0.Add(-time.Hour), time.Minute),
		freezeAt("hour", t0, time.Hour), freezeAt("minute", t0, time.Minute)}
	if got, want := NextFreezeEnd(freezes, t0), t0.Add(time.Minute); !got.Equal(want) {
		t.Errorf("NextFreezeEnd = %s, want %s", got, want)
	}
	if got := NextFreezeEnd(freezes[:2], t0); !got.IsZero() {
		t.Errorf("NextFreezeEnd without one to come = %s, want zero", got)
	}
}

func TestAFreezesMessageNamesItWhatItHoldsWhyAndUntilWhen(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	f := freezeAt("incident-42", t0, time.Hour)
	f.Spec.Message = "rollback of payments"
	want := "Freeze incident-42 holds every write to member2: rollback of payments (until 2026-12-02T11:00:00Z); `federator unfreeze` lifts it"
	if got := FreezeMessage(&f, "member2"); got != want {
		t.Errorf("FreezeMessage = %q\nwant %q", got, want)
	}
	f.Spec.Message, f.Spec.Duration = "", nil
	want = "Freeze incident-42 holds every write to member2; `federator unfreeze` lifts it"
	if got := FreezeMessage(&f, "member2"); got != want {
		t.Errorf("FreezeMessage = %q\nwant %q", got, want)
	}
}
