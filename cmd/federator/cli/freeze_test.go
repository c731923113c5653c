package cli

import (
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

func freezes(t *testing.T, h *hub) []gatingv1alpha1.Freeze {
	t.Helper()
	list := &gatingv1alpha1.FreezeList{}
	if err := h.client.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func registered(names ...string) []*clusterv1alpha1.Cluster {
	var out []*clusterv1alpha1.Cluster
	for _, n := range names {
		out = append(out, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

// A freeze is one Freeze written: the members it names (every one
// without --clusters), the message, and --for as a duration the hub's
// clock counts from when it stored it.
func TestFreezeWritesOneFreeze(t *testing.T) {
	clusters := registered("member1", "member2", "member3")
	h := newTestHub(t, clusters[0], clusters[1], clusters[2])
	out, _, err := run(t, h, "freeze", "-m", "incident 42")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "every write to every member is held from") || !strings.Contains(out, "until `federator unfreeze freeze-") {
		t.Errorf("freeze said %q", out)
	}
	out, _, err = run(t, h, "freeze", "--clusters", "member3,member2", "--for", "1h")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "every write to member2, member3 is held") || !strings.Contains(out, "(--for 1h0m0s)") {
		t.Errorf("freeze --clusters --for said %q", out)
	}
	got := freezes(t, h)
	if len(got) != 2 {
		t.Fatalf("%d Freezes, want 2: %+v", len(got), got)
	}
	var all, two *gatingv1alpha1.Freeze
	for i := range got {
		if len(got[i].Spec.Clusters) == 0 {
			all = &got[i]
		} else {
			two = &got[i]
		}
	}
	if all == nil || all.Spec.Message != "incident 42" || all.Spec.Duration != nil {
		t.Errorf("the fleet-wide freeze: %+v", all)
	}
	if two == nil || strings.Join(two.Spec.Clusters, ",") != "member2,member3" || two.Spec.Duration == nil || two.Spec.Duration.Duration != time.Hour {
		t.Errorf("the freeze of two members: %+v", two)
	}
}

// Bad input freezes nothing, and says what to write.
func TestFreezeRefusesWhatItCannotHold(t *testing.T) {
	clusters := registered("member1", "member2")
	h := newTestHub(t, clusters[0], clusters[1])
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"freeze", "--clusters", "member1,member9"}, `--clusters: cluster "member9" is not registered on the hub (registered: member1, member2); nothing changed`},
		{[]string{"freeze", "--for", "-1h"}, "--for -1h0m0s: a duration must be positive (e.g. 30m, 1h); nothing was frozen"},
		{[]string{"freeze", "now"}, "freeze takes 0 arguments"},
	} {
		_, _, err := run(t, h, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if got := freezes(t, h); len(got) != 0 {
		t.Errorf("refused input left Freezes: %+v", got)
	}
}

// unfreeze ends every freeze in one write, or the ones named; a name
// that is no Freeze ends none.
func TestUnfreezeEndsEveryFreezeOrTheOnesNamed(t *testing.T) {
	f := func(name string) *gatingv1alpha1.Freeze {
		return &gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	h := newTestHub(t, f("freeze-a"), f("freeze-b"), f("freeze-c"))
	if _, _, err := run(t, h, "unfreeze", "freeze-a", "freeze-x"); err == nil ||
		!strings.Contains(err.Error(), `no Freeze "freeze-x" on the hub (freeze-a, freeze-b, freeze-c are)`) {
		t.Errorf("an unknown name: %v", err)
	}
	if got := freezes(t, h); len(got) != 3 {
		t.Fatalf("a refused unfreeze deleted Freezes: %d left", len(got))
	}
	out, _, err := run(t, h, "unfreeze", "freeze-a")
	if err != nil || !strings.Contains(out, "Unfrozen: Freeze freeze-a deleted; still in force: freeze-b, freeze-c") {
		t.Errorf("unfreeze freeze-a: %q, %v", out, err)
	}
	out, _, err = run(t, h, "unfreeze")
	if err != nil || !strings.Contains(out, "Unfrozen: Freeze freeze-b, freeze-c deleted") {
		t.Errorf("unfreeze: %q, %v", out, err)
	}
	if got := freezes(t, h); len(got) != 0 {
		t.Errorf("after unfreeze: %d Freezes", len(got))
	}
	out, _, err = run(t, h, "unfreeze")
	if err != nil || !strings.Contains(out, "No Freeze is in force: nothing to unfreeze") {
		t.Errorf("unfreeze with none: %q, %v", out, err)
	}
}
