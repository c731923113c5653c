package main

import (
	"math/rand"
	"slices"
	"testing"
)

func TestASeedReplaysTheSameOperations(t *testing.T) {
	run := func(seed int64) []string {
		g := &generator{rng: rand.New(rand.NewSource(seed)), seed: seed, members: []string{"member1", "member2", "member3"}}
		s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"})
		var ops []string
		for range 500 {
			var o op
			o, s = g.next(s)
			ops = append(ops, o.String())
			if s.SuspendAll && len(s.SuspendOn) > 0 {
				t.Fatalf("after %s the policy would carry dispatching: true beside dispatchingOnClusters, which the hub refuses", o)
			}
		}
		return ops
	}
	if a, b := run(7), run(7); !slices.Equal(a, b) {
		t.Fatalf("seed 7 chose different operations on a second run")
	}
	if a, b := run(7), run(8); slices.Equal(a, b) {
		t.Fatalf("seeds 7 and 8 chose the same operations")
	}
}

func TestSuspensionsAreWrittenInBothSpellings(t *testing.T) {
	g := &generator{rng: rand.New(rand.NewSource(7)), seed: 7, members: []string{"member1", "member2", "member3"}}
	s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"})
	spellings := map[bool]int{}
	for range 500 {
		var o op
		o, s = g.next(s)
		if o.Kind == opSuspendAll || o.Kind == opSuspendOn {
			spellings[o.Alias]++
		} else if o.Alias {
			t.Fatalf("%s carries a spelling; only spec.suspension writes do", o)
		}
	}
	if spellings[true] == 0 || spellings[false] == 0 {
		t.Fatalf("spec.suspension written %d times in Karmada's spelling and %d in the proposal's; want both", spellings[false], spellings[true])
	}
}
