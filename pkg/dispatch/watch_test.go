package dispatch

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/event"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// memberObject is a member Deployment as the member watch sees it: the
// applied hash annotation and, when status is not nil, a status.
func memberObject(hash string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	u.SetNamespace("demo")
	u.SetName("web")
	u.SetAnnotations(map[string]string{workkeys.AppliedHashAnnotation: hash})
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestNotOwnApply(t *testing.T) {
	ready := map[string]any{"readyReplicas": int64(2)}
	creates := []struct {
		name   string
		object *unstructured.Unstructured
		want   bool
	}{
		{"own create: no status yet", memberObject("a", nil), false},
		{"own create: empty status", memberObject("a", map[string]any{}), false},
		// The watch (re)listed an object whose status changed while the
		// member's watch was down: the only news of that status.
		{"listed with a status", memberObject("a", ready), true},
	}
	for _, c := range creates {
		if got := (notOwnApply{}).Create(event.CreateEvent{Object: c.object}); got != c.want {
			t.Errorf("Create, %s: got %v, want %v", c.name, got, c.want)
		}
	}

	updates := []struct {
		name     string
		old, new *unstructured.Unstructured
		want     bool
	}{
		{"own apply stamps a new hash", memberObject("a", ready), memberObject("b", ready), false},
		// Relisted after an outage: our apply and a status change in one event.
		{"new hash and new status", memberObject("a", nil), memberObject("b", ready), true},
		{"status change", memberObject("a", nil), memberObject("a", ready), true},
		{"edit by someone else", memberObject("a", ready), memberObject("a", ready), true},
	}
	for _, u := range updates {
		if got := (notOwnApply{}).Update(event.UpdateEvent{ObjectOld: u.old, ObjectNew: u.new}); got != u.want {
			t.Errorf("Update, %s: got %v, want %v", u.name, got, u.want)
		}
	}
	if !(notOwnApply{}).Delete(event.DeleteEvent{Object: memberObject("a", nil)}) {
		t.Error("a deletion in the member must requeue its Work")
	}
}
