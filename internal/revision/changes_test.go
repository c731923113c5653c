package revision

import (
	"fmt"
	"slices"
	"testing"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// renamed is cl as the template name (Deployment shop/name) claims it.
func renamed(cl Claimed, name string) Claimed {
	cl.Template = cl.Template.DeepCopy()
	cl.Template.SetName(name)
	cl.Binding = &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name + "-deployment"}}
	return cl
}

// keptAs is the revision that kept cls, by binding key.
func keptAs(cls ...Claimed) map[string]*Template {
	out := map[string]*Template{}
	for _, cl := range cls {
		t := NewTemplate(cl)
		out[t.Binding] = &t
	}
	return out
}

// A new revision says which template and which cluster's content changed,
// and how, so a revision nobody edited for shows what the controller saw.
func TestChangesSayWhatChangedWhere(t *testing.T) {
	both := []string{"member1", "member2"}
	pinned := map[string]string{"member2": "nginx:1.24"}
	base := claimed(t, "nginx:1.25", both, pinned)
	api := renamed(claimed(t, "nginx:1.25", both, nil), "api")
	overridden := claimed(t, "nginx:1.25", both, map[string]string{"member2": "nginx:1.23"})
	newTemplate := claimed(t, "nginx:1.26", []string{"member1", "member2", "member3"}, pinned)
	legacy := keptAs(base)
	legacy["shop/web-deployment"].Clusters = nil
	on := func(cl Claimed, cluster string) string { return cl.Clusters[cluster].Hash }
	for _, tc := range []struct {
		name    string
		kept    map[string]*Template
		claimed []Claimed
		want    []string
	}{
		{"nothing changed", keptAs(base, api), []Claimed{api, base}, nil},
		{"an override changed for one cluster", keptAs(base), []Claimed{overridden}, []string{
			fmt.Sprintf("Deployment shop/web on member2 (content %s → %s; the template's is unchanged: an override that applies here)", on(base, "member2"), on(overridden, "member2"))}},
		{"the template changed, and a cluster was placed since", keptAs(base), []Claimed{newTemplate}, []string{
			fmt.Sprintf("Deployment shop/web on member1 (content %s → %s; the template's %s → %s)", base.Hash, newTemplate.Hash, base.Hash, newTemplate.Hash),
			fmt.Sprintf("Deployment shop/web on member3 (newly placed, and the template's content %s → %s)", base.Hash, newTemplate.Hash)}},
		{"an override that cannot be applied now is no change", keptAs(base), []Claimed{claimed(t, "nginx:1.25", both, map[string]string{"member2": "!"})}, nil},
		{"a template the revision did not hold", keptAs(base), []Claimed{base, api}, []string{
			"Deployment shop/api (newly claimed: the revision did not hold it)"}},
		{"a template claimed no more", keptAs(base, api), []Claimed{base}, []string{
			"Deployment shop/api (claimed no more: the revision held it)"}},
		{"a revision kept before per-cluster renders", legacy, []Claimed{newTemplate}, []string{
			fmt.Sprintf("Deployment shop/web (content %s → %s; the revision kept none per cluster)", base.Hash, newTemplate.Hash)}},
		{"sorted by binding, then cluster", keptAs(base, api), []Claimed{claimed(t, "nginx:1.26", both, map[string]string{"member1": "a", "member2": "b"}),
			renamed(claimed(t, "nginx:1.25", both, map[string]string{"member2": "c", "member1": "d"}), "api")}, []string{
			"Deployment shop/api on member1", "Deployment shop/api on member2", "Deployment shop/web on member1", "Deployment shop/web on member2"}},
		{"only the number of templates differs", keptAs(base), []Claimed{base, base}, []string{
			"the number of claimed templates changed: 1 → 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes := Changes(tc.kept, tc.claimed)
			var got []string
			for _, c := range changes {
				s := c.String()
				if tc.name == "sorted by binding, then cluster" {
					s = c.Template + " on " + c.Cluster
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("changes\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestSummarySaysTheFirstChangeAndHowManyMore(t *testing.T) {
	one := Change{Template: "Deployment default/pinned", Cluster: "member2", How: "content a1b2 → c3d4"}
	for _, tc := range []struct {
		changes []Change
		want    string
	}{
		{nil, "nothing changed"},
		{[]Change{one}, "first: Deployment default/pinned on member2 (content a1b2 → c3d4)"},
		{[]Change{one, one, one}, "first: Deployment default/pinned on member2 (content a1b2 → c3d4); 2 more"},
	} {
		if got := Summary(tc.changes); got != tc.want {
			t.Errorf("Summary = %q, want %q", got, tc.want)
		}
	}
}
