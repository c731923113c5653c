package countdown

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	started := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tomb := Tombstone{Cluster: "member3", Kind: "Deployment", Namespace: "demo", Name: "web", UID: "u-1",
		StartedAt: started, Delay: "10m"}
	marked := Observed{Exists: true, UID: "u-1", StartedAt: started, HasStartedAt: true}
	with := func(f func(*Tombstone)) Tombstone { t := tomb; f(&t); return t }
	cases := []struct {
		name   string
		tomb   Tombstone
		member Observed
		now    time.Time
		max    time.Duration
		want   Action
		wait   time.Duration
	}{
		{name: "just started: wait the whole delay", tomb: tomb, member: marked, now: started, want: Wait, wait: 10 * time.Minute},
		{name: "halfway (a restart in the middle): wait exactly what is left", tomb: tomb, member: marked,
			now: started.Add(4*time.Minute + 30*time.Second), want: Wait, wait: 5*time.Minute + 30*time.Second},
		{name: "the delay has passed: delete", tomb: tomb, member: marked, now: started.Add(10 * time.Minute), want: Delete},
		{name: "long past (the controller was down): delete", tomb: tomb, member: marked, now: started.Add(48 * time.Hour), want: Delete},
		{name: "the mark was removed (placed again): taken back", tomb: tomb,
			member: Observed{Exists: true, UID: "u-1"}, now: started.Add(time.Minute), want: TakenBack},
		{name: "marked by a later countdown: this one is over", tomb: tomb,
			member: Observed{Exists: true, UID: "u-1", StartedAt: started.Add(time.Hour), HasStartedAt: true}, now: started, want: TakenBack},
		{name: "deleted in the member directly: gone", tomb: tomb, member: Observed{}, now: started, want: Gone},
		{name: "another object of the same name: the counted one is gone", tomb: tomb,
			member: Observed{Exists: true, UID: "u-2", StartedAt: started, HasStartedAt: true}, now: started, want: Gone},
		{name: "a bad delay keeps the object, without coming back", tomb: with(func(t *Tombstone) { t.Delay = "24 hours" }),
			member: marked, now: started.Add(1000 * time.Hour), want: Keep},
		{name: "deletion now asked: delete before the delay ends", tomb: with(func(t *Tombstone) { t.DeleteNow = started }),
			member: marked, now: started.Add(time.Second), want: Delete},
		{name: "deletion now asked for an object with a bad delay: delete", tomb: with(func(t *Tombstone) {
			t.Delay, t.DeleteNow = "-5m", started
		}), member: marked, now: started, want: Delete},
		{name: "a delay above the maximum ends at the maximum", tomb: with(func(t *Tombstone) { t.Delay = "1000h" }),
			member: marked, now: started, max: 720 * time.Hour, want: Wait, wait: 720 * time.Hour},
		{name: "a due time fixed at the start outlives a lower maximum (a restart with a lower --max-deletion-delay)",
			tomb:   with(func(t *Tombstone) { t.Due = started.Add(10 * time.Minute) }),
			member: marked, now: started.Add(2 * time.Minute), max: time.Minute, want: Wait, wait: 8 * time.Minute},
		{name: "a due time fixed at the start is kept even above the maximum now", tomb: with(func(t *Tombstone) {
			t.Delay, t.Due = "1000h", started.Add(1000*time.Hour)
		}), member: marked, now: started, max: 720 * time.Hour, want: Wait, wait: 1000 * time.Hour},
		{name: "a fixed due time that has passed: delete", tomb: with(func(t *Tombstone) { t.Due = started.Add(10 * time.Minute) }),
			member: marked, now: started.Add(10 * time.Minute), max: time.Hour, want: Delete},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, wait := Decide(c.tomb, c.member, c.now, c.max)
			if got != c.want || wait != c.wait {
				t.Errorf("Decide = %s, %s; want %s, %s", got, wait, c.want, c.wait)
			}
		})
	}
}
