package revision

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Change is one way what a policy's templates send differs from what a
// kept revision says they sent: what starts a new revision, said so that a
// person can tell an edit from a cache that was behind.
type Change struct {
	// Template names the binding's template: "Deployment default/web";
	// "" for a change of the policy's templates as a whole.
	Template string
	// Binding is the binding's key (BindingKey).
	Binding string
	// Cluster is the cluster whose content changed; "" when the change is
	// the template's as a whole.
	Cluster string
	// How says what changed: "content 1a2b… → 3c4d…", "newly claimed", ...
	How string
}

// String is "Deployment default/web on member2 (content a → b)".
func (c Change) String() string {
	switch {
	case c.Template == "":
		return c.How
	case c.Cluster == "":
		return c.Template + " (" + c.How + ")"
	}
	return c.Template + " on " + c.Cluster + " (" + c.How + ")"
}

// Diff is how what cur's clusters get differs from what kept (cur's
// binding in a kept revision; nil when the revision did not hold it) says
// they got, by cluster name; none when nothing changed. A cluster the
// revision kept is compared by its own hash; one it did not keep (placed
// since, or kept before revisions were kept per cluster) by the template's
// hash: a new placement alone is no new revision. A cluster whose
// overrides cannot be applied now is no change (it keeps the last manifest
// that could be built).
func Diff(kept *Template, cur Claimed) []Change {
	at := func(cluster, how string, args ...any) Change {
		return Change{Template: templateName(cur.Template), Binding: BindingKey(cur.Binding), Cluster: cluster, How: fmt.Sprintf(how, args...)}
	}
	if kept == nil {
		return []Change{at("", "newly claimed: the revision did not hold it")}
	}
	if kept.Hash != cur.Hash && len(kept.Clusters) == 0 {
		return []Change{at("", "content %s → %s; the revision kept none per cluster", kept.Hash, cur.Hash)}
	}
	var out []Change
	for _, cluster := range slices.Sorted(maps.Keys(cur.Clusters)) {
		r := cur.Clusters[cluster]
		if r.Err != nil {
			continue
		}
		was, ok := kept.For(cluster)
		switch {
		case !ok && kept.Hash != cur.Hash:
			out = append(out, at(cluster, "newly placed, and the template's content %s → %s", kept.Hash, cur.Hash))
		case !ok, was == r.Hash:
		case kept.Hash == cur.Hash:
			out = append(out, at(cluster, "content %s → %s; the template's is unchanged: an override that applies here", was, r.Hash))
		default:
			out = append(out, at(cluster, "content %s → %s; the template's %s → %s", was, r.Hash, kept.Hash, cur.Hash))
		}
	}
	return out
}

// Changes is how what the claimed templates send differs from what a
// revision kept (by binding key; nil when it kept nothing): each claimed
// template's Diff, each kept one claimed no more, sorted by binding and
// cluster; none when the revision is what they send.
func Changes(kept map[string]*Template, claimed []Claimed) []Change {
	var out []Change
	claimedKeys := map[string]bool{}
	for _, cl := range claimed {
		key := BindingKey(cl.Binding)
		claimedKeys[key] = true
		out = append(out, Diff(kept[key], cl)...)
	}
	for key, t := range kept {
		if !claimedKeys[key] {
			out = append(out, Change{Template: templateName(&unstructured.Unstructured{Object: t.Object}), Binding: key,
				How: "claimed no more: the revision held it"})
		}
	}
	if len(out) == 0 && len(kept) != len(claimed) {
		out = append(out, Change{How: fmt.Sprintf("the number of claimed templates changed: %d → %d", len(kept), len(claimed))})
	}
	slices.SortFunc(out, func(a, b Change) int {
		return strings.Compare(a.Binding+"\x00"+a.Cluster, b.Binding+"\x00"+b.Cluster)
	})
	return out
}

// Summary says changes in one line: the first, and how many more.
func Summary(changes []Change) string {
	if len(changes) == 0 {
		return "nothing changed"
	}
	s := "first: " + changes[0].String()
	if n := len(changes) - 1; n > 0 {
		s += fmt.Sprintf("; %d more", n)
	}
	return s
}

// templateName is "Deployment default/web", "ClusterRole view".
func templateName(tpl *unstructured.Unstructured) string {
	if tpl == nil || tpl.Object == nil {
		return "a template"
	}
	if ns := tpl.GetNamespace(); ns != "" {
		return tpl.GetKind() + " " + ns + "/" + tpl.GetName()
	}
	return tpl.GetKind() + " " + tpl.GetName()
}
