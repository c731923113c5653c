package binding

import (
	"context"
	"strings"
	"testing"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/revision"
)

// What a cluster gets is the template with its overrides: a Rollout
// releases to a cluster only what it took in for that cluster. An override
// the stamp does not name keeps its cluster held, whatever the template's
// hash says; the others are released.
func TestRolloutReleasesOnlyWhatItTookInForEachCluster(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.healthyRollout(t)
	// An override policy pins member2's replicas.
	b.works.Override = func(m *unstructured.Unstructured, cluster string) (map[string]string, error) {
		if cluster != "member2" {
			return nil, nil
		}
		return map[string]string{"policy.karmada.io/applied-overrides": `[{"policyName":"pin"}]`},
			unstructured.SetNestedField(m.Object, int64(7), "spec", "replicas")
	}
	tpl, hash := b.template(t)
	pinned := revision.RenderFor(tpl, hash, "member2", b.works.Override)
	stamp := func(s revision.Stamp) {
		t.Helper()
		rb := &workv1alpha2.ResourceBinding{}
		if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
			t.Fatal(err)
		}
		rb.Annotations[rolloutsv1alpha1.RevisionAnnotation] = s.String()
		if err := b.hub.Update(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}

	stamp(revision.Stamp{RolloutUID: "ro-uid", Revision: 1, Hash: hash})
	b.reconcile(t)
	if w := b.work(t, "member1"); held(w) || w.Annotations[workkeys.TemplateHashAnnotation] != hash {
		t.Errorf("member1: held %t, content %q; want released at the template's content %s", held(w), w.Annotations[workkeys.TemplateHashAnnotation], hash)
	}
	w := b.work(t, "member2")
	if !held(w) || w.Annotations[workkeys.HoldReasonAnnotation] != workkeys.ReasonRolloutStage ||
		!strings.Contains(w.Annotations[workkeys.HoldMessageAnnotation], "has not taken in what this cluster gets now") {
		t.Errorf("member2: held %t, annotations %v; want held by the Rollout, which has not taken in its override", held(w), w.Annotations)
	}
	if got := w.Annotations[workkeys.TemplateHashAnnotation]; got != pinned.Hash || got == hash {
		t.Errorf("member2's Work carries content %q, want what it gets, %s", got, pinned.Hash)
	}

	stamp(revision.Stamp{RolloutUID: "ro-uid", Revision: 1, Hash: hash, Clusters: map[string]string{"member2": pinned.Hash}})
	b.reconcile(t)
	if w := b.work(t, "member2"); held(w) {
		t.Errorf("member2 held once the Rollout took in its override: %v", w.Annotations)
	}
}

// healthyRollout creates Rollout shop/web, governing policy shop/web, at
// revision 1 and healthy on both members.
func (b *bindingTest) healthyRollout(t *testing.T) {
	t.Helper()
	ro := &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "ro-uid"},
		Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web"}}}
	// The fake hub has no status subresource for Rollouts: the status is
	// stored as created.
	ro.Status = rolloutsv1alpha1.RolloutStatus{Revision: 1, Clusters: []rolloutsv1alpha1.ClusterStatus{
		{Name: "member1", Revision: 1, State: rolloutsv1alpha1.StateHealthy},
		{Name: "member2", Revision: 1, State: rolloutsv1alpha1.StateHealthy}}}
	if err := b.hub.Create(context.Background(), ro); err != nil {
		t.Fatal(err)
	}
}

// template is the Deployment shop/web as stored, and its content hash.
func (b *bindingTest) template(t *testing.T) (*unstructured.Unstructured, string) {
	t.Helper()
	tpl := &unstructured.Unstructured{}
	tpl.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if err := b.hub.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web"}, tpl); err != nil {
		t.Fatal(err)
	}
	hash, err := revision.Hash(tpl)
	if err != nil {
		t.Fatal(err)
	}
	return tpl, hash
}
