package binding

import (
	"context"
	"errors"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

// A gate closed just before a template change holds that change, even
// while the cache still has the gate open (or the Cluster without the
// gate it now lists): every holder's input is confirmed against the API
// server before a cluster is released, as the policy and template are.
// The cache here is the hub as it was before the close: the Gate
// informer lags the template's.
func TestAGateClosedBeforeAChangeHoldsWhileItsCacheLags(t *testing.T) {
	for _, tc := range []struct {
		name string
		// lists says where the gate is listed: on the policy, on the
		// template, or on Cluster member1 (an annotation the cache has
		// not seen either).
		onCluster, onTemplate bool
	}{
		{name: "a policy's gate"},
		{name: "a template's gate", onTemplate: true},
		{name: "a gate a Cluster lists", onCluster: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			b := newBindingTest(t, nil, interceptor.Funcs{})
			gate := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "approval"},
				Spec: gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Opened}}
			if err := b.hub.Create(ctx, gate); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.onTemplate:
				dep := &appsv1.Deployment{}
				if err := b.hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, dep); err != nil {
					t.Fatal(err)
				}
				dep.Annotations = map[string]string{gatingv1alpha1.GatesAnnotation: "approval"}
				if err := b.hub.Update(ctx, dep); err != nil {
					t.Fatal(err)
				}
			case !tc.onCluster:
				pp := b.policy(t)
				pp.Annotations = map[string]string{gatingv1alpha1.GatesAnnotation: "approval"}
				if err := b.hub.Update(ctx, pp); err != nil {
					t.Fatal(err)
				}
			}
			b.setImage(t, "nginx:1.27")
			b.reconcile(t)
			for _, c := range []string{"member1", "member2"} {
				if w := b.work(t, c); held(w) || workImage(w) != "nginx:1.27" {
					t.Fatalf("%s before the close: held %t, image %q; want nginx:1.27 released", c, held(w), workImage(w))
				}
			}
			cachedGate := gate.DeepCopy()
			if err := b.hub.Get(ctx, client.ObjectKeyFromObject(gate), cachedGate); err != nil {
				t.Fatal(err)
			}

			// The user closes the gate (or lists it on member1), then
			// changes the template.
			if tc.onCluster {
				c := &clusterv1alpha1.Cluster{}
				if err := b.hub.Get(ctx, client.ObjectKey{Name: "member1"}, c); err != nil {
					t.Fatal(err)
				}
				c.Annotations = map[string]string{gatingv1alpha1.GatesAnnotation: "shop/approval"}
				if err := b.hub.Update(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			closed := cachedGate.DeepCopy()
			closed.Spec.Default = gatingv1alpha1.Closed
			if err := b.hub.Update(ctx, closed); err != nil {
				t.Fatal(err)
			}
			b.setImage(t, "nginx:1.28")

			lagging := interceptor.NewClient(b.hub.(client.WithWatch), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if g, ok := obj.(*gatingv1alpha1.Gate); ok && key == client.ObjectKeyFromObject(cachedGate) {
						cachedGate.DeepCopyInto(g)
						return nil
					}
					return c.Get(ctx, key, obj, opts...)
				},
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if err := c.List(ctx, list, opts...); err != nil {
						return err
					}
					if clusters, ok := list.(*clusterv1alpha1.ClusterList); ok {
						for i := range clusters.Items {
							delete(clusters.Items[i].Annotations, gatingv1alpha1.GatesAnnotation)
						}
					}
					return nil
				},
			})
			b.works.Client, b.works.APIReader = lagging, b.hub
			if _, err := b.works.Reconcile(ctx, ctrl.Request{NamespacedName: bindingKey}); err != nil {
				t.Logf("reconcile: %v", err)
			}
			gated := []string{"member1", "member2"}
			if tc.onCluster {
				gated = gated[:1]
			}
			for _, c := range gated {
				if w := b.work(t, c); workImage(w) == "nginx:1.28" && !held(w) {
					t.Errorf("%s: Work released with nginx:1.28 though gate shop/approval was closed before the change "+
						"(the cache still had it open); annotations %v", c, w.Annotations)
				}
			}
		})
	}
}

// A pass that fails for one cluster still comes back when a gate it waits
// for changes by itself: controller-runtime drops RequeueAfter when a pass
// returns an error and retries with a backoff that grows to minutes, so a
// window opening meanwhile was honoured only when the backoff ended.
func TestAFailedPassComesBackWhenItsGateChanges(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*workv1alpha1.Work); ok && obj.GetNamespace() == "karmada-es-member2" {
				return apierrors.NewInternalError(errors.New("member2's Work cannot be written"))
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	// Closed by default; a daily window opens it at 11:00.
	gate := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "approval"},
		Spec: gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Closed, Schedules: []gatingv1alpha1.GateSchedule{{Name: "daily",
			Cron: "0 11 * * *", Duration: metav1.Duration{Duration: 2 * time.Hour}, Action: gatingv1alpha1.ActionOpen}}}}
	if err := b.hub.Create(ctx, gate); err != nil {
		t.Fatal(err)
	}
	pp := b.policy(t)
	pp.Annotations = map[string]string{gatingv1alpha1.GatesAnnotation: "approval"}
	if err := b.hub.Update(ctx, pp); err != nil {
		t.Fatal(err)
	}
	var asked []time.Duration
	b.works.requeue = func(_ reconcile.Request, d time.Duration) { asked = append(asked, d) }
	b.works.Clock = clocktesting.NewFakePassiveClock(stamp("2026-11-23T10:50:00Z"))
	if _, err := b.works.Reconcile(ctx, ctrl.Request{NamespacedName: bindingKey}); err == nil {
		t.Fatal("the pass succeeded; the test needs member2's Work to fail")
	}
	if !held(b.work(t, "member1")) {
		t.Fatal("member1 not held by the closed gate")
	}
	if len(asked) != 1 || asked[0] != 10*time.Minute {
		t.Errorf("a failed pass asked to come back after %v, want [10m0s] (when the gate's window opens)", asked)
	}
}
