package main

import (
	"testing"
	"time"
)

func TestSettleFigures(t *testing.T) {
	s := func(ms ...int) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, time.Duration(m)*time.Millisecond)
		}
		return out
	}
	cases := []struct {
		settles []time.Duration
		want    string
	}{
		{s(900, 300, 2100), "converged after each of 3 settles: median 900ms, max 2.1s"},
		{s(5000, 1000, 3000, 2000), "converged after each of 4 settles: median 3s, max 5s"},
	}
	for _, c := range cases {
		if got := settleFigures(c.settles); got != c.want {
			t.Errorf("settleFigures(%v) = %q, want %q", c.settles, got, c.want)
		}
	}
}
