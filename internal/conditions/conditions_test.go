package conditions

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSet(t *testing.T) {
	long := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	stored := func() []metav1.Condition {
		return []metav1.Condition{{Type: "Applied", Status: metav1.ConditionTrue, Reason: "AppliedSuccessful",
			Message: "ok", ObservedGeneration: 1, LastTransitionTime: long}}
	}
	cases := []struct {
		name           string
		set            metav1.Condition
		generation     int64
		transition     bool
		transitionTime bool // lastTransitionTime moved
	}{
		{"the same condition at a new generation is no transition", metav1.Condition{Type: "Applied", Status: metav1.ConditionTrue,
			Reason: "AppliedSuccessful", Message: "ok"}, 2, false, false},
		{"a new message is a transition, the status did not change", metav1.Condition{Type: "Applied", Status: metav1.ConditionTrue,
			Reason: "AppliedSuccessful", Message: "ok again"}, 1, true, false},
		{"a new reason is a transition", metav1.Condition{Type: "Applied", Status: metav1.ConditionTrue,
			Reason: "Other", Message: "ok"}, 1, true, false},
		{"a new status is a transition and moves lastTransitionTime", metav1.Condition{Type: "Applied", Status: metav1.ConditionFalse,
			Reason: "AppliedFailed", Message: "no"}, 1, true, true},
		{"a new type is a transition", metav1.Condition{Type: "Dispatching", Status: metav1.ConditionTrue,
			Reason: "Dispatching", Message: "go"}, 1, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conds := stored()
			if got := Set(&conds, tc.generation, tc.set); got != tc.transition {
				t.Errorf("Set = %v, want %v", got, tc.transition)
			}
			var c *metav1.Condition
			for i := range conds {
				if conds[i].Type == tc.set.Type {
					c = &conds[i]
				}
			}
			if c == nil || c.ObservedGeneration != tc.generation || c.Message != tc.set.Message {
				t.Fatalf("stored %+v, want observedGeneration %d and the new message", c, tc.generation)
			}
			if tc.set.Type == "Applied" && c.LastTransitionTime.Equal(&long) == tc.transitionTime {
				t.Errorf("lastTransitionTime moved = %v, want %v", !c.LastTransitionTime.Equal(&long), tc.transitionTime)
			}
		})
	}
}
