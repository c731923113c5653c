package hold

import "testing"

func TestAnnotationsChanged(t *testing.T) {
	cases := []struct {
		name     string
		old, new map[string]string
		want     bool
	}{
		{"none", nil, map[string]string{}, false},
		{"suspended set", nil, map[string]string{"propagation.federator.dev/suspended": "true"}, true},
		{"suspended note changed", map[string]string{"propagation.federator.dev/suspended": "a"},
			map[string]string{"propagation.federator.dev/suspended": "b"}, true},
		{"one cluster suspended", nil, map[string]string{"suspended.propagation.federator.dev/member2": "true"}, true},
		{"gates listed", nil, map[string]string{"gating.federator.dev/gates": "approval"}, true},
		{"deletion delay", nil, map[string]string{"federator.dev/deletion-delay": "10m"}, true},
		{"anything else", map[string]string{"team": "a"}, map[string]string{"team": "b", "kubectl.kubernetes.io/last-applied-configuration": "{}"}, false},
		{"held either way, other annotations change", map[string]string{"propagation.federator.dev/suspended": "true", "x": "1"},
			map[string]string{"propagation.federator.dev/suspended": "true", "x": "2"}, false},
	}
	for _, c := range cases {
		if got := AnnotationsChanged(c.old, c.new); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if d := AnnotationsDigest(map[string]string{"team": "a"}); d != "" {
		t.Errorf("digest of no hold annotation: %q, want empty", d)
	}
}
