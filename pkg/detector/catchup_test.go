package detector

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/redecide"
)

// cachesBehind is a CacheWatch whose answer the test sets.
type cachesBehind struct{ err error }

func (c *cachesBehind) Current(...schema.GroupKind) error { return c.err }

// A detector pass counts for the round of catching up only when the
// template's hub cache watched the hub as it began; until then the pass is
// repeated, and the binding's Works keep waiting (found by the chaos
// checker: a round ended on a template replaced during a hub restart).
func TestAPassFromATemplateCacheThatDoesNotWatchDoesNotCountForTheRound(t *testing.T) {
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}}}}
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "tpl-uid"}}
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(pp, dep).
		WithIndex(&policyv1alpha1.PropagationPolicy{}, kindIndex, selectedKinds).
		WithIndex(&policyv1alpha1.ClusterPropagationPolicy{}, kindIndex, selectedKinds).Build()

	const bindingKey = "ResourceBinding/shop/web-deployment"
	round := redecide.New(func(context.Context) ([]redecide.Binding, error) {
		return []redecide.Binding{{Namespace: "shop", Name: "web-deployment",
			Template: redecide.Template{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}}}, nil
	}, time.Minute, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = round.Start(ctx) }()
	<-round.Templates() // the round has listed the binding and asks for its template
	asked := round.Bindings(false)

	caches := &cachesBehind{err: errors.New("the hub cache of Deployment.apps has not watched the hub for 2s")}
	d := &Reconciler{client: c, recorder: record.NewFakeRecorder(10), catchUp: round, templateCaches: caches}
	key := Key{GroupVersionKind: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespace: "shop", Name: "web"}
	result, err := d.Reconcile(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if result.RequeueAfter == 0 || result.RequeueAfter > time.Second {
		t.Errorf("a pass from a cache that does not watch: result %+v, want it repeated within a second, "+
			"not after the backoff its failures during the break may have built up", result)
	}
	select {
	case <-asked:
		t.Fatal("the binding controller was asked to decide the binding after a pass that does not count")
	case <-time.After(200 * time.Millisecond):
	}
	if err := round.Current(bindingKey); err == nil {
		t.Fatal("the binding's Works may be dispatched after a pass that does not count")
	}

	caches.err = nil
	if result, err = d.Reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}
	if result.RequeueAfter != 0 {
		t.Errorf("a pass that counts is repeated: %+v", result)
	}
	select {
	case <-asked:
	case <-time.After(5 * time.Second):
		t.Fatal("the binding controller was not asked to decide the binding after a pass that counts")
	}
	if !round.Waits(bindingKey) {
		t.Fatal("the round stopped waiting before the binding controller decided")
	}
	round.Decided(bindingKey, round.Begin(), 1<<40)
	if err := round.Current(bindingKey); err != nil {
		t.Errorf("decided in order, the binding's Works still wait: %v", err)
	}
}
