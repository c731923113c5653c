package countdown

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Observed is what the member holds under a tombstone's name.
type Observed struct {
	// Exists is false when the member has no such object.
	Exists bool
	UID    types.UID
	// StartedAt is the object's countdown mark; false when it has none.
	StartedAt    time.Time
	HasStartedAt bool
}

// Action is what ending a countdown takes now.
type Action string

const (
	// Wait: the delay has not passed; come back after the returned time.
	Wait Action = "Wait"
	// Delete: the delay has passed, or a deletion now was asked.
	Delete Action = "Delete"
	// Keep: the delay cannot be read; nothing happens until the object is
	// placed again or a deletion now is asked.
	Keep Action = "Keep"
	// TakenBack: the object is no longer marked (placed again): the
	// countdown ends without a deletion.
	TakenBack Action = "TakenBack"
	// Gone: the object the countdown was for is no longer in the member
	// (deleted there directly, or replaced by another of the same name).
	Gone Action = "Gone"
)

// Decide is how a countdown ends, at now (pkg/softdelete acts on it): the delay in force is the
// tombstone's, capped at max.
func Decide(t Tombstone, member Observed, now time.Time, max time.Duration) (Action, time.Duration) {
	switch {
	case !member.Exists || member.UID != t.UID:
		return Gone, 0
	case !member.HasStartedAt || !member.StartedAt.Equal(t.StartedAt):
		return TakenBack, 0
	case !t.DeleteNow.IsZero():
		return Delete, 0
	}
	due, ok := t.DueAt(max)
	if !ok {
		return Keep, 0
	}
	if left := due.Sub(now); left > 0 {
		return Wait, left
	}
	return Delete, 0
}
