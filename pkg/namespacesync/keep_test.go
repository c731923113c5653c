package namespacesync

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/federator-dev/federator/internal/countdown"
)

// templateWork is the Work of Deployment ns/name for one cluster, with a
// deletion delay on its manifest ("" for none).
func templateWork(ns, name, delay string) workv1alpha1.Work {
	meta := map[string]any{"namespace": ns, "name": name}
	if delay != "" {
		meta["annotations"] = map[string]any{"federator.dev/deletion-delay": delay}
	}
	raw, _ := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta})
	return workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member2", Name: name + "-deployment"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
}

func held(w workv1alpha1.Work, message string) workv1alpha1.Work {
	w.Spec.SuspendDispatching = ptr.To(true)
	if message != "" {
		w.Annotations = map[string]string{"work.federator.dev/hold-message": message}
	}
	return w
}

func deleting(w workv1alpha1.Work) workv1alpha1.Work {
	w.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	w.Finalizers = []string{"karmada.io/execution-controller"}
	return w
}

func countingDown(ns, name, delay string) countdown.Tombstone {
	return countdown.Tombstone{Cluster: "member2", APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name,
		StartedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Delay: delay}
}

// Which namespaces may go from a cluster, given its Works, their holds and
// the countdowns recorded there.
func TestKeepers(t *testing.T) {
	namespaceWork := templateWork("", "shop", "")
	namespaceWork.Labels = map[string]string{ownerLabel: "shop"}
	for _, tc := range []struct {
		name       string
		works      []workv1alpha1.Work
		tombstones []countdown.Tombstone
		want       []string
	}{
		{name: "nothing of the hub's in it: it goes"},
		{name: "released objects go with it, as in Karmada", works: []workv1alpha1.Work{templateWork("shop", "web", "")}},
		{name: "a held object keeps it", works: []workv1alpha1.Work{held(templateWork("shop", "web", ""), "suspended by annotation x; remove it")},
			want: []string{"Deployment shop/web is held (suspended by annotation x; remove it)"}},
		{name: "a Work held by spec.suspendDispatching alone says Karmada's message",
			works: []workv1alpha1.Work{held(templateWork("shop", "web", ""), "")},
			want:  []string{"Deployment shop/web is held (Work dispatching is in a suspended state.)"}},
		{name: "a held object in another namespace does not", works: []workv1alpha1.Work{held(templateWork("cart", "web", ""), "x")}},
		{name: "a held Work being deleted does not: deletion is never held",
			works: []workv1alpha1.Work{deleting(held(templateWork("shop", "web", ""), "x"))}},
		{name: "a deletion delay keeps it, even on a Work still wanted there",
			works: []workv1alpha1.Work{templateWork("shop", "web", "20s")},
			want:  []string{"Deployment shop/web has deletion delay 20s, which removing the namespace would cut short"}},
		{name: "a Work being deleted with a delay keeps it until its countdown is recorded",
			works: []workv1alpha1.Work{deleting(templateWork("shop", "web", "20s"))},
			want:  []string{"Deployment shop/web is being removed with deletion delay 20s"}},
		{name: "a zero delay is no delay", works: []workv1alpha1.Work{templateWork("shop", "web", "0s")}},
		{name: "a delay that does not parse keeps it: bad input never deletes",
			works: []workv1alpha1.Work{templateWork("shop", "web", "20 seconds")},
			want:  []string{"Deployment shop/web has deletion delay 20 seconds, which removing the namespace would cut short"}},
		{name: "a running countdown keeps it until its due time", tombstones: []countdown.Tombstone{countingDown("shop", "web", "20s")},
			want: []string{"Deployment shop/web counts down until 2026-03-01T12:00:20Z (deletion delay 20s)"}},
		{name: "a countdown that never ends by itself keeps it", tombstones: []countdown.Tombstone{countingDown("shop", "web", "-5m")},
			want: []string{`Deployment shop/web is kept by its deletion delay "-5m", which cannot be honoured`}},
		{name: "a countdown in another namespace does not", tombstones: []countdown.Tombstone{countingDown("cart", "web", "20s")}},
		{name: "the Work being removed and its countdown are one object, told by the countdown",
			works:      []workv1alpha1.Work{deleting(templateWork("shop", "web", "20s"))},
			tombstones: []countdown.Tombstone{countingDown("shop", "web", "20s")},
			want:       []string{"Deployment shop/web counts down until 2026-03-01T12:00:20Z (deletion delay 20s)"}},
		{name: "the namespace's own Work is not something in it", works: []workv1alpha1.Work{held(namespaceWork, "x")}},
		{name: "every keeper is listed, sorted",
			works:      []workv1alpha1.Work{held(templateWork("shop", "web", ""), "x"), templateWork("shop", "api", "1h")},
			tombstones: []countdown.Tombstone{countingDown("shop", "cart", "20s")},
			want: []string{"Deployment shop/api has deletion delay 1h, which removing the namespace would cut short",
				"Deployment shop/cart counts down until 2026-03-01T12:00:20Z (deletion delay 20s)",
				"Deployment shop/web is held (x)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Keepers("shop", tc.works, tc.tombstones)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Keepers = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestKeptMessageNamesTheFirstKeeperAndCountsTheRest(t *testing.T) {
	if got, want := KeptMessage("shop", "member2", []string{"Deployment shop/web is held (x)"}),
		"namespace shop kept in member2: Deployment shop/web is held (x)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := KeptMessage("shop", "member2", []string{"a", "b", "c"}), "namespace shop kept in member2: a (and 2 more)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
