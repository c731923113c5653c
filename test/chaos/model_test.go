package main

import (
	"strings"
	"testing"
	"time"
)

func TestAGateIsOpenByItsNewestRequestThatHasCome(t *testing.T) {
	cases := []struct {
		name string
		gate gateState
		open map[int]bool // instant (ms) -> open
	}{
		{"no request: closed by default", gateState{}, map[int]bool{0: false, 99999: false}},
		{"an open request, from its time on", gateState{OpenAt: at(1000)}, map[int]bool{999: false, 1000: true, 99999: true}},
		{"open --for 3s: open, then closed again by the clock", gateState{OpenAt: at(1000), CloseAt: at(4000)},
			map[int]bool{500: false, 1000: true, 3999: true, 4000: false, 99999: false}},
		{"close --for 2s after an open: closed, then open again", gateState{OpenAt: at(3000), CloseAt: at(1000)},
			map[int]bool{500: false, 1000: false, 2999: false, 3000: true}},
		{"open and close at once: close wins", gateState{OpenAt: at(1000), CloseAt: at(1000)}, map[int]bool{1000: false, 2000: false}},
		{"spec.window ends an open request", gateState{Window: 4 * time.Second, OpenAt: at(1000)},
			map[int]bool{1000: true, 4999: true, 5000: false}},
		{"spec.window ends a close request too: back to the default, closed", gateState{Window: 4 * time.Second, CloseAt: at(1000)},
			map[int]bool{1000: false, 6000: false}},
		{"an open --for longer than spec.window lapses with the window", gateState{Window: 2 * time.Second, OpenAt: at(1000), CloseAt: at(9000)},
			map[int]bool{2999: true, 3000: false, 9000: false}},
		// t0 is on a minute: the scheduled gate is open in [0, 20 s) of each minute.
		{"a schedule opens the gate for 20 s every minute", gateState{Scheduled: true},
			map[int]bool{0: true, 19999: true, 20000: false, 59999: false, 60000: true, 80000: false}},
		{"a close request without spec.window holds only until the window ends", gateState{Scheduled: true, CloseAt: at(5000)},
			map[int]bool{4999: true, 5000: false, 19999: false, 20000: false, 60000: true}},
		{"an open request between windows holds until the next starts, then the schedule decides", gateState{Scheduled: true, OpenAt: at(30000)},
			map[int]bool{29999: false, 30000: true, 59999: true, 60000: true, 79999: true, 80000: false}},
		{"a close request between windows keeps it closed through the next window's start only", gateState{Scheduled: true, CloseAt: at(30000)},
			map[int]bool{30000: false, 59999: false, 60000: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for ms, want := range tc.open {
				if got := tc.gate.openAt(at(ms)); got != want {
					t.Errorf("open at %d ms = %v, want %v", ms, got, want)
				}
			}
		})
	}
}

func TestAGateRequestWritesWhatTheCLIWrites(t *testing.T) {
	cases := []struct {
		name string
		from gateState
		open bool
		For  time.Duration
		want gateState
	}{
		{"open", gateState{}, true, 0, gateState{OpenAt: at(1000)}},
		{"open --for 3s writes the close 3s on", gateState{}, true, 3 * time.Second, gateState{OpenAt: at(1000), CloseAt: at(4000)}},
		{"close --for 2s writes the open 2s on", gateState{OpenAt: at(0)}, false, 2 * time.Second, gateState{OpenAt: at(3000), CloseAt: at(1000)}},
		{"open cancels a pending close", gateState{OpenAt: at(0), CloseAt: at(5000)}, true, 0, gateState{OpenAt: at(1000)}},
		{"open removes a close that has come too, as the CLI and the webhook do", gateState{OpenAt: at(0), CloseAt: at(500)}, true, 0, gateState{OpenAt: at(1000)}},
		{"close cancels a pending open", gateState{OpenAt: at(5000), CloseAt: at(0)}, false, 0, gateState{CloseAt: at(1000)}},
		{"spec.window is kept", gateState{Window: time.Second}, true, 0, gateState{Window: time.Second, OpenAt: at(1000)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.from.request(tc.open, at(1000), tc.For); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCheckerJudgesGatesByTheClock(t *testing.T) {
	base := initialState(map[string]string{"web": "v1"})
	base.Gates = map[string]gateState{"approval": {}}
	listed := with(base, func(s *state) { s.PolicyGates = map[string]bool{"approval": true} })
	v2 := with(listed, func(s *state) { s.Templates["web"] = templateState{Version: "v2"} })
	openFor := with(v2, func(s *state) { s.Gates["approval"] = s.Gates["approval"].request(true, at(5000), 3*time.Second) })
	closeFor := with(openFor, func(s *state) { s.Gates["approval"] = s.Gates["approval"].request(false, at(20000), 4*time.Second) })
	gone := with(closeFor, func(s *state) { delete(s.Gates, "approval") })
	unlisted := with(gone, func(s *state) { s.PolicyGates = nil })

	// History: v1 released (0 ms); the closed gate listed (1000); v2
	// written (2000); open --for 3s (5000, lapses at 8000); close --for 4s
	// (20000, reopens at 24000); the Gate deleted (30000); taken off the
	// list (40000). member2 is frozen from 7000 to 15000.
	history := []intent{
		{Step: 0, Op: "setup", Sent: at(0), Done: at(10), State: base},
		{Step: 1, Op: "gate-list", Sent: at(1000), Done: at(1010), State: listed},
		{Step: 2, Op: "v2", Sent: at(2000), Done: at(2010), State: v2},
		{Step: 3, Op: "gate-open --for 3s", Sent: at(5000), Done: at(5010), State: openFor},
		{Step: 4, Op: "gate-close --for 4s", Sent: at(20000), Done: at(20010), State: closeFor},
		{Step: 5, Op: "gate-delete", Sent: at(30000), Done: at(30010), State: gone},
		{Step: 6, Op: "gate-unlist", Sent: at(40000), Done: at(40010), State: unlisted},
	}
	faults := []fault{{Kind: faultPauseMember, Member: "member2", From: at(7000), To: at(15000)}}
	c := &checker{intents: history, faults: faults, grace: 2 * time.Second}
	judge(t, c, "web", []storeCase{
		{"v1 in flight when the closed gate was listed", stored{Member: "member1", Version: "v1", Written: at(2000), Observed: at(2500)}, false},
		{"v1 long after the closed gate was listed", stored{Member: "member1", Version: "v1", Written: at(4000), Observed: at(4100)}, true},
		{"v2 while the gate is closed", stored{Member: "member1", Version: "v2", Written: at(3000), Observed: at(3100)}, true},
		{"v2 while the gate is open", stored{Member: "member1", Version: "v2", Written: at(6000), Observed: at(6100)}, false},
		{"v2 within the grace after the open lapsed", stored{Member: "member1", Version: "v2", Written: at(9000), Observed: at(9500)}, false},
		{"v2 after the grace after the open lapsed", stored{Member: "member1", Version: "v2", Written: at(12000), Observed: at(12100)}, true},
		{"v2 on a member frozen when the open lapsed, once it runs again",
			stored{Member: "member2", Version: "v2", Written: at(15000), Observed: at(15100)}, false},
		{"v2 on that member long after its freeze", stored{Member: "member2", Version: "v2", Written: at(18000), Observed: at(18100)}, true},
		{"v2 after a close --for, before the gate flips back", stored{Member: "member1", Version: "v2", Written: at(23000), Observed: at(23100)}, true},
		{"v2 once the gate flipped back open", stored{Member: "member1", Version: "v2", Written: at(25000), Observed: at(25100)}, false},
		{"v2 within the grace after the Gate was deleted", stored{Member: "member1", Version: "v2", Written: at(31000), Observed: at(31100)}, false},
		{"v2 while a deleted Gate is listed", stored{Member: "member1", Version: "v2", Written: at(35000), Observed: at(35100)}, true},
		{"v2 once the deleted Gate is off the list", stored{Member: "member1", Version: "v2", Written: at(41000), Observed: at(41100)}, false},
	})

	t.Run("the report says which gate held and its requests", func(t *testing.T) {
		v := c.check(stored{Template: "web", Member: "member1", Version: "v2", Written: at(12000), Observed: at(12100)})
		if v == nil {
			t.Fatal("not reported")
		}
		r := c.report(v, []string{"member1", "member2"}, t0)
		for _, want := range []string{"gate approval closed", "gates approval: open t+5.000s close t+8.000s"} {
			if !strings.Contains(r, want) {
				t.Errorf("the report does not say %q:\n%s", want, r)
			}
		}
	})

	t.Run("spec.window ends an open request without --for", func(t *testing.T) {
		windowed := with(v2, func(s *state) { s.Gates["approval"] = gateState{Window: 4 * time.Second} })
		open := with(windowed, func(s *state) { s.Gates["approval"] = s.Gates["approval"].request(true, at(1000), 0) })
		c := &checker{intents: []intent{{Sent: at(0), Done: at(10), State: windowed}, {Sent: at(1000), Done: at(1010), State: open}},
			grace: 2 * time.Second}
		judge(t, c, "web", []storeCase{
			{"v2 within the window", stored{Member: "member1", Version: "v2", Written: at(4000), Observed: at(4100)}, false},
			{"v2 after the window and its grace", stored{Member: "member1", Version: "v2", Written: at(8000), Observed: at(8100)}, true},
		})
	})

	t.Run("a deleted policy keeps the gate decision it had", func(t *testing.T) {
		deleted := func(s state, sent, done time.Time) state {
			n, f := s.clone(), s.clone()
			n.PolicyExists, n.Frozen, n.DeletedSent, n.DeletedDone = false, &f, sent, done
			return n
		}
		// Open --for 3s at 1000; the policy deleted at 3000; the request
		// lapses at 4000 while the Works keep the release.
		h := []intent{
			{Sent: at(0), Done: at(10), State: v2},
			{Sent: at(1000), Done: at(1010), State: with(v2, func(s *state) { s.Gates["approval"] = s.Gates["approval"].request(true, at(1000), 3*time.Second) })},
		}
		h = append(h, intent{Sent: at(3000), Done: at(3010), State: deleted(h[1].State, at(3000), at(3010))})
		c := &checker{intents: h, grace: 2 * time.Second}
		judge(t, c, "web", []storeCase{{"v2 after the open lapsed, while the deleted policy's Works keep the release",
			stored{Member: "member1", Version: "v2", Written: at(10000), Observed: at(10100)}, false}})

		// Closed when the policy is deleted at 1000, opened at 1500: the
		// controller may see the open before the deletion, not long after.
		h = []intent{{Sent: at(0), Done: at(10), State: v2}}
		h = append(h, intent{Sent: at(1000), Done: at(1010), State: deleted(v2, at(1000), at(1010))})
		h = append(h, intent{Sent: at(1500), Done: at(1510),
			State: with(h[1].State, func(s *state) { s.Gates["approval"] = s.Gates["approval"].request(true, at(1500), 0) })})
		c = &checker{intents: h, grace: 2 * time.Second}
		judge(t, c, "web", []storeCase{
			{"v2 just after a gate opened racing the policy's deletion",
				stored{Member: "member1", Version: "v2", Written: at(2000), Observed: at(2100)}, false},
			{"v2 long after the policy was deleted with its gate closed",
				stored{Member: "member1", Version: "v2", Written: at(9000), Observed: at(9100)}, true},
		})
	})
}
