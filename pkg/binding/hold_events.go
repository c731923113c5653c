package binding

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/pkg/hold"
)

// The events a binding controller sends when what holds a binding changes.

// holdEvent tells a person, on the template, that dispatching was suspended
// or resumed, where to and why, when the holds on clusters that had a Work
// before this pass changed (on a first propagation: when something holds).
// Nil when nothing changed.
func (r *Reconciler) holdEvent(tpl *unstructured.Unstructured, b bindingview.View, heldBefore map[string]bool, decisions map[string]hold.Decision) func() {
	if len(heldBefore) == 0 {
		// A first propagation: nothing was dispatched before, so only a
		// hold is news (an approval gate closed from the start).
		heldBefore = map[string]bool{}
		for cluster := range decisions {
			heldBefore[cluster] = false
		}
	}
	// Compared over the clusters that had a Work and still have one: a
	// cluster leaving or joining the placement is no suspension news.
	was, isHeld := map[string]bool{}, map[string]bool{}
	now := map[string]hold.Decision{}
	for cluster, held := range heldBefore {
		if d, targeted := decisions[cluster]; targeted {
			was[cluster], isHeld[cluster], now[cluster] = held, d.Held(), d
		}
	}
	before, after := hold.HeldSummary(was), hold.HeldSummary(isHeld)
	if before == after {
		return nil
	}
	policy := b.PolicyKey()
	if after == "" {
		return func() {
			r.Recorder.Eventf(tpl, corev1.EventTypeNormal, policykeys.EventReasonDispatchingResumed,
				"dispatching resumed to every cluster (policy %s)", policy)
		}
	}
	why := ""
	if notes := hold.Notes(now); len(notes) > 0 {
		why = ": " + strings.Join(notes, "; ")
	}
	return func() {
		r.Recorder.Eventf(tpl, corev1.EventTypeNormal, policykeys.EventReasonDispatchingSuspended,
			"dispatching suspended to %s (policy %s)%s", after, policy, why)
	}
}

// setDispatching records on b what holds its target clusters, as the Works
// just written say: Dispatching=False with the holds, or True.
func setDispatching(b bindingview.View, decisions map[string]hold.Decision) {
	c := metav1.Condition{Type: workkeys.ConditionBindingDispatching, Status: metav1.ConditionTrue,
		Reason: workkeys.ReasonDispatching, Message: workkeys.MessageBindingDispatching}
	if held, reason, message := hold.Record(decisions); held {
		c = metav1.Condition{Type: workkeys.ConditionBindingDispatching, Status: metav1.ConditionFalse,
			Reason: reason, Message: message}
	}
	conditions.Set(&b.Status.Conditions, bindingview.Unstamped, c)
}

func holdSummary(decisions map[string]hold.Decision) string {
	if s := hold.Summary(decisions); s != "" {
		return "; held: " + s
	}
	return ""
}
