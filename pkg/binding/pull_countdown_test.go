package binding

import (
	"context"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/internal/countdown"
)

// pullMember2 makes member2 a Pull cluster: an agent in it applies its
// Works, and may delete their objects as soon as a Work is deleted.
func (b *bindingTest) pullMember2(t *testing.T) {
	t.Helper()
	c := &clusterv1alpha1.Cluster{}
	if err := b.hub.Get(context.Background(), client.ObjectKey{Name: "member2"}, c); err != nil {
		t.Fatal(err)
	}
	c.Spec.SyncMode = clusterv1alpha1.Pull
	if err := b.hub.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// placeOn places the template on clusters only.
func (b *bindingTest) placeOn(t *testing.T, clusters ...string) {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(context.Background(), bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	rb.Spec.Placement.ClusterAffinity.ClusterNames = clusters
	rb.Generation++
	if err := b.hub.Update(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
}

func (b *bindingTest) tombstones(t *testing.T, cluster string) []countdown.Tombstone {
	t.Helper()
	list := &corev1.ConfigMapList{}
	if err := b.hub.List(context.Background(), list, client.InNamespace("karmada-es-"+cluster)); err != nil {
		t.Fatal(err)
	}
	var out []countdown.Tombstone
	for i := range list.Items {
		tomb, err := countdown.FromConfigMap(&list.Items[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tomb)
	}
	return out
}

// keptFor is whether w is kept by the hub for a countdown: held, marked.
func keptFor(w *workv1alpha1.Work) bool {
	_, marked := countdown.StartedAt(w)
	return marked && held(w) && w.DeletionTimestamp.IsZero() && w.Annotations["work.federator.dev/hold-reason"] == "DeletionCountdown"
}

// A Pull cluster's Work whose object carries a deletion delay is kept by
// the hub, held and marked, with its countdown in a tombstone naming it,
// when the object is no longer placed there: its agent (karmada-agent)
// would delete the object the moment the Work went. Placed there again,
// the Work is written again without the mark. A Push cluster's Work goes
// as before: its dispatcher counts down in the member.
func TestAPullClustersWorkIsKeptForItsDeletionDelay(t *testing.T) {
	for _, pull := range []bool{true, false} {
		t.Run(map[bool]string{true: "Pull", false: "Push"}[pull], func(t *testing.T) {
			b := newBindingTest(t, nil, interceptor.Funcs{})
			if pull {
				b.pullMember2(t)
			}
			b.setDelay(t, b.policy(t), "1h")
			b.reconcile(t)
			b.placeOn(t, "member1")
			b.reconcile(t)

			ws := b.worksIn(t, "member2")
			if !pull {
				if len(ws) != 0 && ws[0].DeletionTimestamp.IsZero() {
					t.Fatalf("a Push cluster's Work is kept: %+v", ws[0].Annotations)
				}
				return
			}
			if len(ws) != 1 || !keptFor(&ws[0]) {
				t.Fatalf("member2's Work: %d, want one kept held and marked", len(ws))
			}
			tombs := b.tombstones(t, "member2")
			if len(tombs) != 1 || tombs[0].Work != ws[0].Name || tombs[0].UID != ws[0].UID || tombs[0].Delay != "1h" ||
				tombs[0].Kind != "Deployment" || tombs[0].Name != "web" {
				t.Fatalf("tombstones %+v; want one for Deployment shop/web naming the kept Work", tombs)
			}
			if !strings.Contains(strings.Join(b.events(), "\n"), "SoftDeletionStarted") {
				t.Errorf("events %q; want SoftDeletionStarted", b.events())
			}
			if held(b.work(t, "member1")) {
				t.Error("member1's Work is held")
			}
			// A second pass keeps it as it is.
			before := ws[0].ResourceVersion
			b.reconcile(t)
			if w := b.work(t, "member2"); w.ResourceVersion != before || len(b.tombstones(t, "member2")) != 1 {
				t.Errorf("a second pass rewrote the kept Work (%s → %s) or its tombstone", before, w.ResourceVersion)
			}

			b.placeOn(t, "member1", "member2")
			b.reconcile(t)
			w := b.work(t, "member2")
			if _, marked := countdown.StartedAt(w); marked || held(w) {
				t.Errorf("placed again: member2's Work still marked %v or held %v", marked, held(w))
			}
		})
	}
}

// The binding deleted (its template gone), a Pull cluster's Work with a
// delay stays, kept, and the binding goes; the others are deleted.
func TestAPullClustersWorkOutlivesItsBindingForItsDeletionDelay(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.pullMember2(t)
	b.setDelay(t, b.policy(t), "1h")
	b.reconcile(t)
	b.deleteBinding(t)
	b.reconcile(t)
	if rb := (&workv1alpha2.ResourceBinding{}); b.hub.Get(ctx, bindingKey, rb) == nil {
		t.Errorf("the binding stays, finalizers %v", rb.Finalizers)
	}
	if ws := b.worksIn(t, "member1"); len(ws) != 0 && ws[0].DeletionTimestamp.IsZero() {
		t.Error("member1's (Push) Work is not deleted")
	}
	if ws := b.worksIn(t, "member2"); len(ws) != 1 || !keptFor(&ws[0]) {
		t.Fatalf("member2's (Pull) Work: %d, want one kept", len(ws))
	}
	if tombs := b.tombstones(t, "member2"); len(tombs) != 1 || tombs[0].Work == "" {
		t.Errorf("tombstones %+v; want one naming the kept Work", tombs)
	}
}
