package main

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"
)

// drawFaults draws steps faults of seed's generator with agents Pull
// members, as execute does, and returns them with the generator's next
// draw after them.
func drawFaults(seed int64, steps, agents int) ([]faultDraw, int64) {
	g := &generator{rng: rand.New(rand.NewSource(seed)), seed: seed, members: []string{"member1", "member2", "member3"}}
	var draws []faultDraw
	pausedUntil := 0
	for step := 1; step <= steps; step++ {
		d := g.drawFault(step, pausedUntil, agents)
		if d.pause {
			pausedUntil = d.pausedUntil
		}
		draws = append(draws, d)
	}
	return draws, g.rng.Int63()
}

// With Pull members a seed kills agents and otherwise draws what it drew
// without: the same controller kills and member freezes, and the same
// draws left for the operations, so a seed recorded before Pull members
// replays, and a seed's operations are the same with and without them.
func TestAgentKillsTakeNoDrawOfTheirOwn(t *testing.T) {
	kills := map[int]map[int]int{} // agents: agent index: kills
	for seed := int64(1); seed <= 40; seed++ {
		without, nextWithout := drawFaults(seed, 200, 0)
		for _, agents := range []int{1, 2, 3} {
			with, nextWith := drawFaults(seed, 200, agents)
			if nextWith != nextWithout {
				t.Fatalf("seed %d with %d Pull members: the operations after the faults draw other values", seed, agents)
			}
			if kills[agents] == nil {
				kills[agents] = map[int]int{}
			}
			for i, d := range with {
				w := without[i]
				if w.killAgent {
					t.Fatalf("seed %d, step %d: an agent killed with no Pull member", seed, i+1)
				}
				if d.killController != w.killController || d.pause != w.pause || d.member != w.member || d.pausedUntil != w.pausedUntil ||
					(d.killController && d.down != w.down) {
					t.Fatalf("seed %d, step %d with %d Pull members: drew %+v, without %+v", seed, i+1, agents, d, w)
				}
				if !d.killAgent {
					continue
				}
				if w.killController || w.pause {
					t.Fatalf("seed %d, step %d: an agent kill in a step that chose another fault", seed, i+1)
				}
				if d.agent < 0 || d.agent >= agents || d.down < 0 || d.down >= maxAgentDown {
					t.Fatalf("seed %d, step %d: killed agent %d of %d for %s", seed, i+1, d.agent, agents, d.down)
				}
				kills[agents][d.agent]++
			}
		}
	}
	// 40 seeds × 200 steps, 7 % each: about 560 kills.
	for agents, byAgent := range kills {
		for a := range agents {
			if byAgent[a] < 50 {
				t.Errorf("with %d Pull members agent %d was killed %d times in 8,000 steps, want about %d", agents, a, byAgent[a], 560/agents)
			}
		}
	}
}

// The band of kill-agent is where nothing was chosen before, as wide as
// kill-controller's; where a draw falls in it says which agent and for
// how long.
func TestAgentKillBand(t *testing.T) {
	cases := []struct {
		f      float64
		agents int
		kill   bool
		agent  int
		down   time.Duration
	}{
		{0.15, 0, false, 0, 0},
		{0.069, 1, false, 0, 0}, // kill-controller's
		{0.139, 1, false, 0, 0}, // pause-member's
		{0.14, 1, true, 0, 0},
		{0.175, 1, true, 0, 750 * time.Millisecond},
		{0.20986, 1, true, 0, 1497 * time.Millisecond},
		{0.21, 1, false, 0, 0},
		{0.9, 1, false, 0, 0},
		{0.1925, 2, true, 1, 750 * time.Millisecond},
		{0.1575, 2, true, 0, 750 * time.Millisecond},
	}
	for _, c := range cases {
		kill, agent, down := agentKill(c.f, c.agents)
		if kill != c.kill || agent != c.agent || down.Round(time.Millisecond) != c.down {
			t.Errorf("agentKill(%v, %d) = %t, %d, %s; want %t, %d, %s", c.f, c.agents, kill, agent, down, c.kill, c.agent, c.down)
		}
	}
}

func TestPullMembersAreTheLast(t *testing.T) {
	names := []string{"member1", "member2", "member3"}
	for n, want := range map[int][]string{0: {}, 1: {"member3"}, 3: names} {
		if got := pullMembers(names, n); !slices.Equal(got, want) {
			t.Errorf("pullMembers(%d) = %v, want %v", n, got, want)
		}
	}
	for _, n := range []int{0, 1, 3} {
		if err := validPullMembers(n, 3); err != nil {
			t.Errorf("--pull-members %d: %v", n, err)
		}
	}
	for _, n := range []int{-1, 4} {
		err := validPullMembers(n, 3)
		if err == nil || !strings.Contains(err.Error(), "give 0 to 3") {
			t.Errorf("--pull-members %d on 3 members: %v, want a refusal that says what to give", n, err)
		}
	}
}

// An agent kill delays when a Pull member's countdown is taken back by
// as long as the agent was away; another member's agent does not.
func TestAnAgentKillDelaysItsMembersTakeBack(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	again := intent{Sent: at, Done: at.Add(100 * time.Millisecond)}
	due := at.Add(10 * time.Second)
	c := &checker{grace: 2 * time.Second, faults: []fault{
		{Kind: faultKillAgent, Member: "member3", From: at.Add(time.Second), To: at.Add(4 * time.Second)},
		{Kind: faultKillAgent, Member: "member2", From: at.Add(time.Second), To: at.Add(9 * time.Second)},
	}}
	want := again.Done.Add(c.grace)
	if got := c.takenBackBy("member1", again, due); !got.Equal(want) {
		t.Errorf("member1 (no agent killed): by %s, want %s", got.Sub(at), want.Sub(at))
	}
	if got := c.takenBackBy("member3", again, due); !got.Equal(want.Add(3 * time.Second)) {
		t.Errorf("member3 (its agent away 3 s): by %s, want %s", got.Sub(at), want.Add(3*time.Second).Sub(at))
	}
}
