package countdown

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestEffective(t *testing.T) {
	const key = "federator.dev/deletion-delay"
	tpl := func(v string) Source {
		return Source{Name: "Deployment demo/web", Annotations: map[string]string{key: v}}
	}
	pol := func(v string) Source {
		return Source{Name: "PropagationPolicy demo/web", Annotations: map[string]string{key: v}}
	}
	none := Source{Name: "PropagationPolicy demo/web"}
	cases := []struct {
		name             string
		template, policy Source
		want             time.Duration
		from, manifest   string
		problem          string // substring; "" for none
		capped, unset    bool
	}{
		{name: "nothing sets a delay", template: Source{Name: "Deployment demo/web"}, policy: none, unset: true},
		{name: "the template's own delay", template: tpl("24h"), policy: none, want: 24 * time.Hour,
			from: "Deployment demo/web", manifest: "24h"},
		{name: "the policy's default when the template sets none", template: Source{Name: "Deployment demo/web"}, policy: pol("90m"),
			want: 90 * time.Minute, from: "PropagationPolicy demo/web", manifest: "90m"},
		{name: "the template's own wins over the policy's default", template: tpl("5s"), policy: pol("24h"),
			want: 5 * time.Second, from: "Deployment demo/web", manifest: "5s"},
		{name: "the template's bad value wins too: bad input is not papered over", template: tpl("24 hours"), policy: pol("24h"),
			from: "Deployment demo/web", manifest: "24 hours", problem: `deletion delay 24 hours on Deployment demo/web: "24 hours" is not a Go duration`},
		{name: "a negative delay is refused", template: tpl("-5m"), policy: none, manifest: "-5m", from: "Deployment demo/web",
			problem: `"-5m" is negative`},
		{name: "a hex number is no duration", template: tpl("0x10"), policy: none, manifest: "0x10", from: "Deployment demo/web",
			problem: `"0x10" is not a Go duration`},
		{name: "a bad policy default", template: Source{Name: "Deployment demo/web"}, policy: pol("1 day"), manifest: "1 day",
			from: "PropagationPolicy demo/web", problem: "on PropagationPolicy demo/web"},
		{name: "above the maximum it is capped", template: tpl("1000h"), policy: none, want: 720 * time.Hour, capped: true,
			from: "Deployment demo/web", manifest: "720h0m0s"},
		{name: "exactly the maximum is not capped", template: tpl("720h"), policy: none, want: 720 * time.Hour,
			from: "Deployment demo/web", manifest: "720h"},
		{name: "zero is no delay, and valid", template: tpl("0s"), policy: none, from: "Deployment demo/web", manifest: "0s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Effective(c.template, c.policy, DefaultMaxDelay)
			if d.Set == c.unset {
				t.Fatalf("Set = %v, want %v", d.Set, !c.unset)
			}
			if c.problem == "" && d.Problem != "" || c.problem != "" && !strings.Contains(d.Problem, c.problem) {
				t.Errorf("Problem = %q, want it to say %q", d.Problem, c.problem)
			}
			if c.problem == "" && d.Value != c.want {
				t.Errorf("Value = %s, want %s", d.Value, c.want)
			}
			if d.Capped != c.capped || d.From != c.from || d.ManifestValue() != c.manifest {
				t.Errorf("Capped, From, ManifestValue = %v, %q, %q; want %v, %q, %q", d.Capped, d.From, d.ManifestValue(),
					c.capped, c.from, c.manifest)
			}
		})
	}
}

func TestDelayMessageSaysTheValueAndTheCap(t *testing.T) {
	d := Effective(Source{Name: "Deployment demo/web", Annotations: map[string]string{"federator.dev/deletion-delay": "1000h"}},
		Source{}, DefaultMaxDelay)
	want := "deletion delay 1000h on Deployment demo/web is above --max-deletion-delay 720h0m0s: 720h0m0s is used"
	if got := d.Message(DefaultMaxDelay); got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
}

func TestTombstoneRoundTrip(t *testing.T) {
	started := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	want := Tombstone{Cluster: "member3", APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web",
		UID: "u-1", StartedAt: started, Delay: "5s", Due: started.Add(5 * time.Second), Binding: Ref{"ResourceBinding", "demo", "web-deployment"},
		Policy: Ref{"PropagationPolicy", "demo", "web"}, DeleteNow: started.Add(time.Second)}
	cm := want.ConfigMap()
	if cm.Namespace != "karmada-es-member3" || cm.Labels["softdelete.federator.dev/tombstone"] != "true" {
		t.Errorf("tombstone stored as %s/%s with labels %v", cm.Namespace, cm.Name, cm.Labels)
	}
	got, err := FromConfigMap(cm)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	if due, ok := got.DueAt(0); !ok || !due.Equal(started.Add(5*time.Second)) {
		t.Errorf("DueAt = %s, %v", due, ok)
	}
	if due, _ := (Tombstone{StartedAt: started, Delay: "1000h"}).DueAt(DefaultMaxDelay); !due.Equal(started.Add(DefaultMaxDelay)) {
		t.Errorf("a tombstone above the maximum is due at %s, want the cap", due)
	}
	if _, ok := (Tombstone{StartedAt: started, Delay: "24 hours"}).DueAt(0); ok {
		t.Error("a tombstone with a bad delay has a due time")
	}
}

// A countdown's due time is fixed when it starts: a --max-deletion-delay
// lowered later (on a restart) does not move it; only a tombstone stored
// before due times were recorded is capped by the maximum in force.
func TestDueIsFixedWhenTheCountdownStarts(t *testing.T) {
	started := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		delay string // what the manifest carries at the start
		max   time.Duration
		// legacy: a tombstone without a due time (stored by an older hub)
		legacy bool
		want   time.Time // zero: no due time (kept)
	}{
		{name: "the delay the copy carried", delay: "1h", max: DefaultMaxDelay, want: started.Add(time.Hour)},
		{name: "a maximum lowered below it later does not shorten it", delay: "1h", max: time.Minute, want: started.Add(time.Hour)},
		{name: "nor does no maximum at all lengthen it", delay: "1h", max: 0, want: started.Add(time.Hour)},
		{name: "a bad delay has no due time, whatever the maximum", delay: "24 hours", max: time.Minute},
		{name: "a tombstone without a due time is capped by the maximum in force", delay: "1h", max: time.Minute, legacy: true,
			want: started.Add(time.Minute)},
		{name: "a tombstone without a due time under the maximum keeps its delay", delay: "1h", max: DefaultMaxDelay, legacy: true,
			want: started.Add(time.Hour)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			manifest := &unstructured.Unstructured{}
			manifest.SetAnnotations(map[string]string{"federator.dev/deletion-delay": c.delay})
			obj := &unstructured.Unstructured{}
			obj.SetAPIVersion("apps/v1")
			obj.SetKind("Deployment")
			obj.SetNamespace("demo")
			obj.SetName("web")
			cm := NewTombstone("member3", manifest, obj, started).ConfigMap()
			if c.legacy {
				delete(cm.Data, "dueAt")
			}
			stored, err := FromConfigMap(cm)
			if err != nil {
				t.Fatal(err)
			}
			due, ok := stored.DueAt(c.max)
			if ok != !c.want.IsZero() || !due.Equal(c.want) {
				t.Errorf("DueAt(%s) = %s, %v; want %s", c.max, due, ok, c.want)
			}
		})
	}
}
