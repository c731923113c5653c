package fleetmetrics

import (
	"strings"
	"testing"
	"time"
)

func TestSteeringFor(t *testing.T) {
	steering := map[string]string{
		"1.27.errorRate":        "0.2",
		"1.27.latency":          "300ms",
		"1.28-broken.errorRate": "0.05",
		"latency":               "80ms",
	}
	cases := []struct {
		name  string
		data  map[string]string
		image string
		want  Behaviour
	}{
		{"no steering: no errors, 50ms", nil, "nginx:1.26", DefaultBehaviour},
		{"no steering: a -broken tag fails half its requests", nil, "nginx:1.27-broken", Behaviour{0.5, 50 * time.Millisecond}},
		{"a version's keys apply to it", steering, "nginx:1.27", Behaviour{0.2, 300 * time.Millisecond}},
		{"by tag, whatever the repository", steering, "registry.local:5000/team/web:1.27", Behaviour{0.2, 300 * time.Millisecond}},
		{"another version gets only the keys for every version", steering, "nginx:1.26", Behaviour{0, 80 * time.Millisecond}},
		{"a -broken version's own key overrides its default", steering, "nginx:1.28-broken", Behaviour{0.05, 80 * time.Millisecond}},
		{"a -broken version without keys of its own keeps its default", steering, "nginx:1.29-broken", Behaviour{0.5, 80 * time.Millisecond}},
		{"a key for every version overrides the -broken default", map[string]string{"errorRate": "0"}, "nginx:1.27-broken", DefaultBehaviour},
		{"a version's key wins over the one for every version", map[string]string{"errorRate": "0.9", "1.27.errorRate": "0.1"}, "nginx:1.27", Behaviour{0.1, 50 * time.Millisecond}},
		{"no tag is latest", map[string]string{"latest.errorRate": "1"}, "localhost:5000/nginx", Behaviour{1, 50 * time.Millisecond}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, errs := ParseSteering(c.data)
			if len(errs) > 0 {
				t.Fatalf("ParseSteering: %v", errs)
			}
			if got := s.For(c.image); got != c.want {
				t.Errorf("For(%q) = %+v; want %+v", c.image, got, c.want)
			}
		})
	}
}

// A key it cannot use is named with what it takes, and the others apply.
func TestSteeringRefusesWhatItCannotUse(t *testing.T) {
	s, errs := ParseSteering(map[string]string{
		"1.27.errorRate": "20%",
		"1.26.errorRate": "1.5",
		"1.27.latency":   "slow",
		"1.27.errors":    "0.2",
		"1.28.errorRate": " 0.3 ",
	})
	want := []string{
		`key "1.26.errorRate": "1.5" is no error rate: give a number from 0 to 1`,
		`key "1.27.errorRate": "20%" is no error rate`,
		`key "1.27.errors": unknown; use errorRate or latency`,
		`key "1.27.latency": "slow" is no latency: give a positive Go duration, e.g. 300ms`,
	}
	if len(errs) != len(want) {
		t.Fatalf("errors %v; want %d", errs, len(want))
	}
	for i, w := range want {
		if !strings.Contains(errs[i].Error(), w) {
			t.Errorf("error %d = %q; want it to say %q", i, errs[i], w)
		}
	}
	if got := s.For("nginx:1.28"); got.ErrorRate != 0.3 {
		t.Errorf("the valid key was not applied: %+v", got)
	}
	if got := s.For("nginx:1.27"); got != DefaultBehaviour {
		t.Errorf("refused keys applied: %+v", got)
	}
}

func TestTag(t *testing.T) {
	for image, want := range map[string]string{
		"nginx:1.27":                    "1.27",
		"nginx":                         "latest",
		"localhost:5000/nginx":          "latest",
		"localhost:5000/nginx:1.27-rc1": "1.27-rc1",
		"nginx:1.27@sha256:abcd":        "1.27",
		"nginx@sha256:abcd":             "latest",
	} {
		if got := Tag(image); got != want {
			t.Errorf("Tag(%q) = %q; want %q", image, got, want)
		}
	}
}
