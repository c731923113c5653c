package conditions

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestChanged(t *testing.T) {
	opened := func(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
		return []metav1.Condition{
			{Type: "Other", Status: metav1.ConditionFalse, Reason: "Other", Message: "other"},
			{Type: "Opened", Status: status, Reason: reason, Message: message},
		}
	}
	other := []metav1.Condition{{Type: "Other", Status: metav1.ConditionTrue, Reason: "Other", Message: "other"}}
	cases := []struct {
		name          string
		before, after []metav1.Condition
		statusOnly    bool // Changed with StatusOnly
		withMessage   bool // Changed with StatusAndMessage
	}{
		{"absent on both sides", nil, other, false, false},
		{"appears", other, opened(metav1.ConditionFalse, "Closed", "closed"), true, true},
		{"goes", opened(metav1.ConditionTrue, "Open", "open"), other, true, true},
		{"the same", opened(metav1.ConditionTrue, "Open", "open"), opened(metav1.ConditionTrue, "Open", "open"), false, false},
		{"the status changes", opened(metav1.ConditionTrue, "Open", "open"), opened(metav1.ConditionFalse, "Open", "open"), true, true},
		{"True to Unknown is a change", opened(metav1.ConditionTrue, "Open", "open"), opened(metav1.ConditionUnknown, "Open", "open"), true, true},
		{"the message changes", opened(metav1.ConditionFalse, "Closed", "until 10:00"), opened(metav1.ConditionFalse, "Closed", "until 11:00"), false, true},
		{"only the reason changes", opened(metav1.ConditionFalse, "Closed", "closed"), opened(metav1.ConditionFalse, "CloseRequested", "closed"), false, false},
		{"only another condition changes", opened(metav1.ConditionTrue, "Open", "open"),
			append(opened(metav1.ConditionTrue, "Open", "open")[1:], other...), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Changed(tc.before, tc.after, "Opened", StatusOnly); got != tc.statusOnly {
				t.Errorf("Changed(StatusOnly) = %v, want %v", got, tc.statusOnly)
			}
			if got := Changed(tc.before, tc.after, "Opened", StatusAndMessage); got != tc.withMessage {
				t.Errorf("Changed(StatusAndMessage) = %v, want %v", got, tc.withMessage)
			}
		})
	}
}
