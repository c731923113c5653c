package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Nothing reaches a member before the binding controller has decided
// every binding once since this replica began to lead: a Work the previous
// leader left may be behind its template and its holds.
func TestNothingAppliedBeforeTheBindingControllersFirstPass(t *testing.T) {
	w := workFixture(t, false, nil)
	d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
	firstPass := make(chan struct{})
	d.r.FirstPass = firstPass

	// The replica stops leading before the first pass is over.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := d.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if _, err := d.memberDeployment(); err == nil {
		t.Fatal("the Work was applied before the binding controller's first pass")
	}

	close(firstPass)
	d.reconcile(t, w)
	if _, err := d.memberDeployment(); err != nil {
		t.Fatalf("after the first pass the Work is applied: %v", err)
	}
}

// A release the cache still shows is never applied over the hold the
// binding controller has since written: right after a change of leader, its
// first pass writes the holds it decided just as the dispatchers start, and
// the dispatcher's cache may not have that write yet (found by the chaos
// checker, seed 2026: a member stored a version 4 s after its hold). The
// member is written only once the API server's Work is the one the cache
// gave, and the next pass holds.
func TestACachedReleaseIsNotAppliedOverANewerHold(t *testing.T) {
	released := workFixture(t, false, nil)
	d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{released})
	held := workFixture(t, true, nil)
	held.Generation = 2
	scheme := d.hub.Scheme()
	d.r.HubReader = fake.NewClientBuilder().WithScheme(scheme).WithObjects(held).Build()

	res := d.reconcile(t, released)
	if _, err := d.memberDeployment(); err == nil {
		t.Fatal("the member got the release the cache showed, over the hold the API server has")
	}
	if res == (ctrl.Result{}) {
		t.Errorf("the pass that found the cache behind is not retried: %+v", res)
	}
	if c := d.work(t, released).Status.Conditions; len(c) != 0 {
		t.Errorf("a pass refused for a stale cache wrote status: %+v", c)
	}

	// Once the cache and the API server agree, the Work is applied.
	d.r.HubReader = d.hub
	d.reconcile(t, released)
	if _, err := d.memberDeployment(); err != nil {
		t.Fatalf("a Work the API server confirms is applied: %v", err)
	}
}

// hubCachesFunc is a HubCaches.
type hubCachesFunc func(binding string, templates ...schema.GroupKind) error

func (f hubCachesFunc) Current(binding string, templates ...schema.GroupKind) error {
	return f(binding, templates...)
}

// Nothing reaches a member from a hub cache that is not watching the hub:
// after a hub restart an informer may retry its watch for up to 30 s, and
// the Work it shows may be behind a suspension written meanwhile (found by
// the chaos checker, seed 2026 run 5: a Work released at v12 was applied
// after v15-v17 and a suspension that the leader's caches never received).
// The member is written once the caches watch again, and nothing of the
// refused pass is written to the hub either.
func TestNothingAppliedFromAHubCacheThatIsNotWatching(t *testing.T) {
	w := workFixture(t, false, map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotationKey: "shop",
		workv1alpha2.ResourceBindingNameAnnotationKey: "web-deployment"})
	d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
	var asked []schema.GroupKind
	var askedBinding string
	behind := errors.New("the hub cache of PropagationPolicy.policy.karmada.io has not watched the hub for 6s")
	d.r.HubCaches = hubCachesFunc(func(binding string, templates ...schema.GroupKind) error {
		asked, askedBinding = templates, binding
		return behind
	})

	res := d.reconcile(t, w)
	if _, err := d.memberDeployment(); err == nil {
		t.Fatal("the Work was applied from a hub cache that does not watch the hub")
	}
	if res.RequeueAfter <= 0 {
		t.Errorf("the refused pass is not retried: %+v", res)
	}
	if c := d.work(t, w).Status.Conditions; len(c) != 0 {
		t.Errorf("a pass refused for a hub cache that does not watch wrote status: %+v", c)
	}
	if want := []schema.GroupKind{{Group: "apps", Kind: "Deployment"}}; !slices.Equal(asked, want) {
		t.Errorf("the caches asked about are %v, want the Work's template kinds %v", asked, want)
	}

	if want := "ResourceBinding/shop/web-deployment"; askedBinding != want {
		t.Errorf("the binding asked about is %q, want the Work's %q", askedBinding, want)
	}

	d.r.HubCaches = hubCachesFunc(func(string, ...schema.GroupKind) error { return nil })
	d.reconcile(t, w)
	if _, err := d.memberDeployment(); err != nil {
		t.Fatalf("once the caches watch the hub the Work is applied: %v", err)
	}
}

// holdsFunc is a Holds.
type holdsFunc func(keys ...string) (string, string)

func (f holdsFunc) Deciding(keys ...string) (string, string) { return f(keys...) }

// No release reaches a member while the hub's controllers decide a hold
// change of its Work: a release written before a suspension, still on its
// way to a member that was away (or to a new leader's dispatchers), is
// what the suspension withdraws, and under load the pass that withdraws
// it takes seconds (found by the chaos checker, seed 31: versions stored
// 2.8 s after `suspend --clusters` returned, while the binding
// controller's pass that held them ran for 3.7 s). The dispatcher asks by
// the Work's binding and its template, and applies once none is deciding.
func TestNoReleaseAppliedWhileAHoldChangeIsDecided(t *testing.T) {
	w := workFixture(t, false, map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotationKey: "shop",
		workv1alpha2.ResourceBindingNameAnnotationKey: "web-deployment"})
	d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
	var asked []string
	d.r.Holds = holdsFunc(func(keys ...string) (string, string) {
		asked = keys
		return "binding", "ResourceBinding/shop/web-deployment"
	})

	res := d.reconcile(t, w)
	if _, err := d.memberDeployment(); err == nil {
		t.Fatal("the release was applied while the binding controller decided a hold change of its binding")
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > time.Second {
		t.Errorf("the waiting pass is not retried soon: %+v", res)
	}
	if c := d.work(t, w).Status.Conditions; len(c) != 0 {
		t.Errorf("a pass that waits for a hold change wrote status: %+v", c)
	}
	tpl := w.Spec.Workload.Manifests[0]
	var head metav1.PartialObjectMetadata
	if err := json.Unmarshal(tpl.Raw, &head); err != nil {
		t.Fatal(err)
	}
	want := []string{"Deployment.apps/" + head.Namespace + "/" + head.Name, "ResourceBinding/shop/web-deployment"}
	if !slices.Equal(asked, want) {
		t.Errorf("asked about %v, want the Work's template and binding %v", asked, want)
	}

	d.r.Holds = holdsFunc(func(...string) (string, string) { return "", "" })
	d.reconcile(t, w)
	if _, err := d.memberDeployment(); err != nil {
		t.Fatalf("once no hold change is decided the Work is applied: %v", err)
	}
}
