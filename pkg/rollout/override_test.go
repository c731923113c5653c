package rollout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/revision"
)

// tagOn applies (or changes) OverridePolicy shop/pin: the image tag is
// value on cluster, on every cluster when cluster is "".
func (h *fakeHub) tagOn(cluster, value string) {
	h.t.Helper()
	op := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pin"}}
	err := h.client.Get(context.Background(), client.ObjectKeyFromObject(op), op)
	if client.IgnoreNotFound(err) != nil {
		h.t.Fatal(err)
	}
	op.Spec = policyv1alpha1.OverrideSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
		OverrideRules: []policyv1alpha1.RuleWithCluster{{
			Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
				Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: value}}},
		}},
	}
	if cluster != "" {
		op.Spec.OverrideRules[0].TargetCluster = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}}
	}
	if err != nil {
		err = h.client.Create(context.Background(), op)
	} else {
		err = h.client.Update(context.Background(), op)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *fakeHub) stamp() revision.Stamp {
	h.t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web-deployment"}, rb); err != nil {
		h.t.Fatal(err)
	}
	s, ok := revision.ParseStamp(rb.Annotations[v1.RevisionAnnotation])
	if !ok {
		h.t.Fatalf("binding stamp %q cannot be read", rb.Annotations[v1.RevisionAnnotation])
	}
	return s
}

// keptImage is the image revision rev kept for cluster, and whether it
// kept a render of its own for it.
func (h *fakeHub) keptImage(rev int64, cluster string) (string, bool) {
	h.t.Helper()
	ro := &v1.Rollout{}
	if err := h.client.Get(context.Background(), h.key, ro); err != nil {
		h.t.Fatal(err)
	}
	cr := &appsv1.ControllerRevision{}
	if err := h.client.Get(context.Background(), revision.Rollout{Obj: ro, Spec: &ro.Spec, Status: &ro.Status, Kind: "Rollout"}.HistoryKey(rev), cr); err != nil {
		h.t.Fatal(err)
	}
	t, ok, err := revision.FromHistory(cr, "shop/web-deployment")
	if err != nil || !ok {
		h.t.Fatalf("revision %d keeps no template: %v", rev, err)
	}
	obj, _, _, rendered := t.RenderedFor(cluster)
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	return containers[0].(map[string]any)["image"].(string), rendered
}

// newOverriddenHub is a fake hub whose Rollout has a canary stage
// (member1) and the rest, with OverridePolicy shop/pin setting the tag on
// cluster (every cluster when ""), at revision 1.
func newOverriddenHub(t *testing.T, cluster, tag string) *fakeHub {
	t.Helper()
	ro := testRollout("web", "web", t0)
	ro.Spec.Stages = []v1.Stage{{Name: "canary", Clusters: []string{"member1"}}, {Name: "rest", Clusters: []string{"member2", "member3"}}}
	h := newFakeHub(t, ro)
	h.tagOn(cluster, tag)
	if got := h.reconcile(0).Status.Revision; got != 1 {
		t.Fatalf("revision %d, want 1", got)
	}
	return h
}

// An OverridePolicy that changes what a cluster gets is a new revision,
// staged like a template change; the revision keeps what each cluster got,
// and the binding's stamp says it per cluster.
func TestReconcileTakesInAnOverrideChangeAsARevision(t *testing.T) {
	h := newOverriddenHub(t, "member2", "0.9")
	first := h.stamp()
	if len(first.Clusters) != 1 || first.Clusters["member2"] == "" || first.Clusters["member2"] == first.Hash {
		t.Fatalf("stamp %s: want member2's own hash (its override) and no other", first)
	}

	h.reconcile(time.Second)
	if got := h.reconcile(2 * time.Second).Status.Revision; got != 1 {
		t.Fatalf("revision %d with nothing changed, want 1", got)
	}

	h.tagOn("member2", "0.8")
	got := h.reconcile(3 * time.Second)
	if got.Status.Revision != 2 {
		t.Fatalf("revision %d after member2's override changed, want 2", got.Status.Revision)
	}
	if got.Status.CurrentStage != "canary" {
		t.Errorf("current stage %q, want the override change to start from the first stage", got.Status.CurrentStage)
	}
	if s := h.stamp(); s.Revision != 2 || s.Hash != first.Hash || s.Clusters["member2"] == first.Clusters["member2"] {
		t.Errorf("stamp %s after the change, stamp %s before: want revision 2, the same template hash, a new hash for member2", s, first)
	}
	for _, tc := range []struct {
		rev      int64
		cluster  string
		image    string
		rendered bool
	}{
		{1, "member2", "nginx:0.9", true},
		{2, "member2", "nginx:0.8", true},
		{2, "member1", "nginx:1", true},
	} {
		if image, rendered := h.keptImage(tc.rev, tc.cluster); image != tc.image || rendered != tc.rendered {
			t.Errorf("revision %d keeps %s for %s (rendered %v), want %s (%v)", tc.rev, image, tc.cluster, rendered, tc.image, tc.rendered)
		}
	}
	// The event says what changed: member2's content, by its override.
	said := fmt.Sprintf("revision 2: what the templates send changed (a template, or an override that applies to it); it starts from the first stage; "+
		"first: Deployment shop/web on member2 (content %s → %s; the template's is unchanged: an override that applies here)",
		first.Clusters["member2"], h.stamp().Clusters["member2"])
	var started []string
	for len(h.events.Events) > 0 {
		if e := <-h.events.Events; strings.Contains(e, v1.EventReasonRevisionStarted) {
			started = append(started, e)
		}
	}
	if want := "Normal " + v1.EventReasonRevisionStarted + " " + said; !slices.Equal(started, []string{want}) {
		t.Errorf("%s events %q, want one: %q", v1.EventReasonRevisionStarted, started, want)
	}
}
