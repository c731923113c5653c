package rollout

import (
	"encoding/json"
	"testing"
	"time"

	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// stored is status as the API server keeps it: times in whole seconds
// (metav1.Time's JSON).
func stored(t *testing.T, st v1.RolloutStatus) v1.RolloutStatus {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out v1.RolloutStatus
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A soak lasts at least its minSuccessTime although the status that
// carries its start is stored to the second: a start stored rounded down
// would end it up to a second early, releasing the next stage before the
// canary soaked (seen by the chaos checker: a 2 s soak ended after 1.87 s).
// Pausing and resuming moves the start by no less than the pause.
func TestASoakNeverEndsEarlyOnceItsStatusIsStored(t *testing.T) {
	const soak = 2 * time.Second
	for _, tc := range []struct {
		name string
		// pause and resume are offsets from t0 (0: no pause).
		pause, resume time.Duration
		// slack is how much longer the soak may last: a second for its
		// start rounded up; with a pause, a second more for the pause's
		// start stored rounded down, and one for the moved start rounded up.
		slack time.Duration
	}{
		{name: "no pause", slack: time.Second},
		{name: "paused and resumed within the soak", pause: 1700 * time.Millisecond, resume: 2300 * time.Millisecond, slack: 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := revision2(with(Input{Stages: threeStages()}, func(in *Input) { in.Stages[0].MinSuccessTime = soak }).Stages)
			step := func(offset time.Duration, paused bool) Output {
				in.Now = t0.Add(offset)
				in.Healthy = map[string]bool{"member1": offset > 0}
				in.Paused = ""
				if paused {
					in.Paused = "true"
				}
				out := Step(in)
				in.Prior = stored(t, statusAfter(out))
				return out
			}
			step(0, false)
			soakStarted := 900 * time.Millisecond
			if out := step(soakStarted, false); out.WaitingReason != v1.ReasonStageSoaking {
				t.Fatalf("at %s: %s (%q), want the canary soaking", soakStarted, out.WaitingReason, out.Waiting)
			}
			pausedFor := time.Duration(0)
			if tc.pause > 0 {
				step(tc.pause, true)
				step(tc.resume, false)
				pausedFor = tc.resume - tc.pause
			}
			// Every instant before the soak has run its full time.
			for offset := soakStarted + 100*time.Millisecond; offset < soakStarted+soak+pausedFor; offset += 100 * time.Millisecond {
				if out := step(offset, false); out.Status.CurrentStage != "canary" {
					t.Fatalf("at %s the rollout is at stage %q (%s): the canary soaked %s of %s",
						offset, out.Status.CurrentStage, out.WaitingReason, offset-soakStarted-pausedFor, soak)
				}
			}
			// And it does end, within the slack.
			if out := step(soakStarted+soak+pausedFor+tc.slack, false); out.Status.CurrentStage != "mid" {
				t.Fatalf("the soak did not end %s after its time: stage %q (%q)", tc.slack, out.Status.CurrentStage, out.Waiting)
			}
		})
	}
}
