// Package hold owns the one decision of whether a cluster's copy of a
// resource template is held back from that cluster, and by what. Every kind
// of hold (the policy's spec.suspension, the suspended annotation on a
// policy or a template, and later gates, rollout stages) is a Check: a
// small named function over plain values. Decide runs them all for every
// target cluster and returns, per cluster, the holds that apply, each with a
// reason constant and a message a person can act on.
//
// Nothing here reads or writes the API: the binding controller gathers the
// Input, calls Decide and writes the outcome into each Work
// (spec.suspendDispatching plus the hold annotations); the dispatcher only
// honours the Work. Adding a holder is one Check in its own file, one entry
// in Checks, and rows in the table test.
package hold

import (
	"fmt"
	"slices"
	"strings"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
)

// Object is what a check reads of a template or a policy.
type Object struct {
	// Kind is the object's kind; empty for "no such object".
	Kind        string
	Namespace   string
	Name        string
	Annotations map[string]string
}

// String names the object for a person: "PropagationPolicy shop/web".
func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Input is everything that can hold a template's copies.
type Input struct {
	// Template is the resource template on the hub.
	Template Object
	// Policy is the PropagationPolicy or ClusterPropagationPolicy that
	// claims the template; zero when it is not (or no longer) known.
	Policy Object
	// Suspension is the policy's spec.suspension as the binding carries it.
	Suspension *policyv1alpha1.Suspension
	// KnownClusters are the registered Clusters' names; nil when unknown
	// (then no check relies on them).
	KnownClusters []string
	// TemplateGates are the gates the template lists: they hold every
	// cluster.
	TemplateGates []Gate
	// PolicyGates are the gates the policy lists: they hold every cluster.
	PolicyGates []Gate
	// ClusterGates are, per cluster, the gates its Cluster lists.
	ClusterGates map[string][]Gate
	// Rollout governs the policy's templates; nil when none does.
	Rollout *Rollout
	// Frozen are, per cluster, what the Freeze in force that holds it
	// says (gatestate.FreezeMessage), judged by the clock; FrozenUntil is
	// when the first of those that ends by itself ends (zero: none does).
	Frozen      map[string]string
	FrozenUntil time.Time
}

// Hold is one holder's verdict on one cluster.
type Hold struct {
	// Check is the name of the check that holds.
	Check string
	// Reason is the Work Dispatching condition's reason while this holds
	// (apis/work's Reason... constants).
	Reason string
	// Message says, for a person, what holds and what releases it.
	Message string
	// Note is the reason a person gave for the hold (an annotation's
	// value), "" when none was given.
	Note string
	// Gates are the gates that hold, as "namespace/name" (GateClosed).
	Gates []string
}

// Check is one kind of holder.
type Check struct {
	// Name identifies the check in Hold.Check and in logs.
	Name string
	// Holds reports whether the check holds cluster, and how.
	Holds func(in Input, cluster string) (Hold, bool)
}

// Checks are every holder, in the order their holds are reported: the one
// closest to the template first.
var Checks = []Check{
	templateSuspendedCheck,
	policySuspendedCheck,
	clusterSuspendedCheck,
	policySuspensionCheck,
	unknownSuspendedClusterCheck,
	unknownClusterAnnotationCheck,
	gateClosedCheck,
	rolloutStageCheck,
	frozenCheck,
}

// Decision is what holds one cluster's copy; nothing when it is free.
type Decision struct {
	Holds []Hold
}

// Held reports whether anything holds the cluster.
func (d Decision) Held() bool { return len(d.Holds) > 0 }

// Reason is the first hold's reason, "" when nothing holds.
func (d Decision) Reason() string {
	if !d.Held() {
		return ""
	}
	return d.Holds[0].Reason
}

// Gates are the gates among the holds, as "namespace/name", sorted, each
// once.
func (d Decision) Gates() []string {
	var out []string
	for _, h := range d.Holds {
		out = append(out, h.Gates...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Message is every hold's message, "; "-separated.
func (d Decision) Message() string {
	msgs := make([]string, 0, len(d.Holds))
	for _, h := range d.Holds {
		msgs = append(msgs, h.Message)
	}
	return strings.Join(msgs, "; ")
}

// Decide runs checks for every cluster.
func Decide(in Input, clusters []string, checks []Check) map[string]Decision {
	out := make(map[string]Decision, len(clusters))
	for _, cluster := range clusters {
		var d Decision
		for _, c := range checks {
			if h, held := c.Holds(in, cluster); held {
				h.Check = c.Name
				d.Holds = append(d.Holds, h)
			}
		}
		out[cluster] = d
	}
	return out
}

// Summary says where decisions hold: "every cluster" when all of them,
// "clusters a, b" when some, "" when none.
func Summary(decisions map[string]Decision) string {
	held := make(map[string]bool, len(decisions))
	for cluster, d := range decisions {
		held[cluster] = d.Held()
	}
	return HeldSummary(held)
}

// HeldSummary is Summary over cluster → held.
func HeldSummary(held map[string]bool) string {
	var names []string
	for cluster, h := range held {
		if h {
			names = append(names, cluster)
		}
	}
	switch {
	case len(names) == 0:
		return ""
	case len(names) == len(held):
		return "every cluster"
	}
	slices.Sort(names)
	return "clusters " + strings.Join(names, ", ")
}

// Notes are the reasons people gave for the holds in decisions, each once,
// in check order.
func Notes(decisions map[string]Decision) []string {
	clusters := make([]string, 0, len(decisions))
	for c := range decisions {
		clusters = append(clusters, c)
	}
	slices.Sort(clusters)
	var notes []string
	for _, c := range clusters {
		for _, h := range decisions[c].Holds {
			if h.Note != "" && !slices.Contains(notes, h.Note) {
				notes = append(notes, h.Note)
			}
		}
	}
	return notes
}

// annotationNote is the reason a person gave in an annotation's value:
// "true" means none.
func annotationNote(value string) string {
	if value == "true" {
		return ""
	}
	return value
}

func withNote(msg, note string) string {
	if note == "" {
		return msg
	}
	return fmt.Sprintf("%s (%q)", msg, note)
}
