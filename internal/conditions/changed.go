package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Compared is what of a condition Changed compares, besides whether it is
// there at all.
type Compared int

const (
	// StatusOnly compares the condition's status.
	StatusOnly Compared = iota
	// StatusAndMessage compares its status and its message.
	StatusAndMessage
)

// Changed reports whether the condition of type condType differs between
// before and after, for a watch predicate: it appears or goes, or what
// compared says of it changed. Its reason, observedGeneration and
// lastTransitionTime are never compared.
func Changed(before, after []metav1.Condition, condType string, compared Compared) bool {
	b := meta.FindStatusCondition(before, condType)
	a := meta.FindStatusCondition(after, condType)
	if b == nil || a == nil {
		return (b == nil) != (a == nil)
	}
	return b.Status != a.Status || compared == StatusAndMessage && b.Message != a.Message
}
