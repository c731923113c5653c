package hold

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// Gate is what a check needs to know of one gate something waits for.
type Gate struct {
	// Ref is the gate as "namespace/name".
	Ref string
	// ListedBy names what lists the gate: "Deployment shop/web",
	// "PropagationPolicy shop/web", "Cluster member2".
	ListedBy string
	// Found is false when no such Gate exists.
	Found bool
	// Opened is the gate's state now, judged by the clock
	// (gatestate.At), as its Opened condition says once evaluated.
	Opened bool
	// Why says what decided the state, as the Opened condition's message.
	Why string
	// ChangesAt is when the gate's state can next change by itself (a
	// request's or a schedule's window); zero when only a new request can.
	ChangesAt time.Time
	// Problem, when set, says the reference itself cannot be read (e.g. a
	// bare name where a namespace is needed); such a gate holds.
	Problem string
}

// gateClosedCheck: a closed, missing or unreadable gate listed by the
// template or the claiming policy (every cluster) or by a target Cluster
// (that cluster) holds, fail safe. Deletion is never held: the dispatcher deletes
// whatever the Work says.
var gateClosedCheck = Check{Name: "GateClosed", Holds: func(in Input, cluster string) (Hold, bool) {
	var msgs, notes, refs []string
	for _, g := range slices.Concat(in.TemplateGates, in.PolicyGates, in.ClusterGates[cluster]) {
		if g.Problem == "" && (!g.Found || !g.Opened) {
			refs = append(refs, g.Ref)
		}
		switch {
		case g.Problem != "":
			msgs = append(msgs, fmt.Sprintf("%s (listed by %s)", g.Problem, g.ListedBy))
			notes = append(notes, g.Problem)
		case !g.Found:
			msgs = append(msgs, fmt.Sprintf("gate '%s' does not exist (listed by %s); create it, or remove it from annotation gating.federator.dev/gates",
				g.Ref, g.ListedBy))
			notes = append(notes, fmt.Sprintf("gate '%s' does not exist", g.Ref))
		case !g.Opened:
			why := g.Why
			if why == "" {
				why = "not evaluated yet"
			}
			msgs = append(msgs, fmt.Sprintf("waiting approval, gate '%s' is closed (%s; listed by %s)", g.Ref, why, g.ListedBy))
			notes = append(notes, fmt.Sprintf("gate '%s' is closed", g.Ref))
		}
	}
	if len(msgs) == 0 {
		return Hold{}, false
	}
	return Hold{Reason: workkeys.ReasonGateClosed, Message: strings.Join(msgs, "; "), Note: strings.Join(notes, ", "), Gates: refs}, true
}}

// ParseGates reads the annotation gating.federator.dev/gates of what lists
// gates: comma-separated "name" (in namespace, the lister's own; "" when
// the lister is cluster-scoped and a bare name cannot be placed) or
// "namespace/name". A reference that cannot be read becomes a Gate with a
// Problem, so it holds rather than being dropped.
func ParseGates(value, namespace, listedBy string) []Gate {
	var out []Gate
	for _, raw := range strings.Split(value, ",") {
		ref := strings.TrimSpace(raw)
		if ref == "" {
			continue
		}
		g := Gate{Ref: ref, ListedBy: listedBy}
		parts := strings.Split(ref, "/")
		switch {
		case len(parts) == 1 && namespace == "":
			g.Problem = fmt.Sprintf("gate '%s' in annotation gating.federator.dev/gates needs a namespace: write namespace/%s", ref, ref)
		case len(parts) == 1:
			g.Ref = namespace + "/" + ref
		case len(parts) != 2 || parts[0] == "" || parts[1] == "":
			g.Problem = fmt.Sprintf("gate '%s' in annotation gating.federator.dev/gates is not name or namespace/name", ref)
		}
		if ns, name, _ := strings.Cut(g.Ref, "/"); g.Problem == "" {
			// A Gate cannot be named so: saying it does not exist would
			// ask for one that cannot be created.
			if len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
				g.Problem = fmt.Sprintf("gate '%s' in annotation gating.federator.dev/gates cannot name a Gate: write namespace/name "+
					"in lowercase letters, digits, '-' and '.' (e.g. ops/approval)", ref)
			}
		}
		out = append(out, g)
	}
	return out
}
