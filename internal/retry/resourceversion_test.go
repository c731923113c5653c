package retry

import "testing"

func TestBehind(t *testing.T) {
	cases := []struct {
		name        string
		have, floor string
		want        bool
	}{
		{"nothing recorded elsewhere", "37", "", false},
		{"the same version", "39", "39", false},
		{"the cache is older", "37", "39", true},
		{"the cache is newer (the record is behind, not the cache)", "40", "39", false},
		{"integers compared as numbers, not strings", "100", "99", false},
		{"and the other way", "99", "100", true},
		{"versions that are not integers and differ: read afresh", "a7", "b2", true},
		{"one not an integer", "37", "x", true},
	}
	for _, c := range cases {
		if got := Behind(c.have, c.floor); got != c.want {
			t.Errorf("%s: Behind(%q, %q) = %v, want %v", c.name, c.have, c.floor, got, c.want)
		}
	}
}
