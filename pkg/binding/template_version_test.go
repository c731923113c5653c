package binding

import (
	"context"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// staleTemplate is a cache that keeps the template shop/web as it is now,
// as a template informer that has not caught up after a change of leader or
// a restart of the hub's API server does, while every other read sees the
// API server.
func (b *bindingTest) staleTemplate(t *testing.T) client.Client {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := b.hub.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}
	cached := &unstructured.Unstructured{}
	if err := b.hub.Scheme().Convert(dep, cached, nil); err != nil {
		t.Fatal(err)
	}
	cached.SetAPIVersion("apps/v1")
	cached.SetKind("Deployment")
	stale := interceptor.NewClient(b.hub.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if u, ok := obj.(*unstructured.Unstructured); ok && u.GetKind() == "Deployment" {
				cached.DeepCopyInto(u)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		}})
	return stale
}

// The chaos checker (seed 2026, run 3) saw a member sent a version the user
// had replaced 3 s before, just after the hub's API server came back: the
// new leader's binding informer had caught up, its Deployment informer not.
// A template older than what the binding records or a Work was built from
// is read afresh from the API server, never sent.
func TestATemplateTheCacheHasNotCaughtUpWithIsNotSent(t *testing.T) {
	t.Run("older than the Works were built from", func(t *testing.T) {
		b := newBindingTest(t, nil, interceptor.Funcs{})
		b.setImage(t, "nginx:1.27")
		b.reconcile(t)
		stale := b.staleTemplate(t) // the new leader's cache, at 1.27
		b.setImage(t, "nginx:1.28")
		// The previous leader saw 1.28 and wrote it.
		b.reconcile(t)
		b.works.Client, b.works.APIReader = stale, b.hub
		b.reconcile(t)
		for _, cluster := range []string{"member1", "member2"} {
			if got := workImage(b.work(t, cluster)); got != "nginx:1.28" {
				t.Errorf("%s: Work carries %q after a pass with a template cache behind, want nginx:1.28 (what it was built from)", cluster, got)
			}
		}
	})
	t.Run("older than the binding records", func(t *testing.T) {
		b := newBindingTest(t, nil, interceptor.Funcs{})
		b.setImage(t, "nginx:1.27")
		b.reconcile(t)
		b.works.Client, b.works.APIReader = b.staleTemplate(t), b.hub // the cache stays at 1.27
		b.setImage(t, "nginx:1.28")
		// The detector recorded the new version on the binding.
		dep := &appsv1.Deployment{}
		if err := b.hub.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web"}, dep); err != nil {
			t.Fatal(err)
		}
		rb := &workv1alpha2.ResourceBinding{}
		if err := b.hub.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: bindingName}, rb); err != nil {
			t.Fatal(err)
		}
		rb.Spec.Resource.ResourceVersion = dep.ResourceVersion
		if err := b.hub.Update(context.Background(), rb); err != nil {
			t.Fatal(err)
		}
		b.reconcile(t)
		for _, cluster := range []string{"member1", "member2"} {
			w := b.work(t, cluster)
			if got := workImage(w); got != "nginx:1.28" {
				t.Errorf("%s: Work carries %q, built from a template older than its binding records; want nginx:1.28", cluster, got)
			}
			if got := w.Annotations["work.federator.dev/template-version"]; got != dep.ResourceVersion {
				t.Errorf("%s: template-version %q, want %q (the version the manifest was built from)", cluster, got, dep.ResourceVersion)
			}
		}
	})
}

// After a hub restart the template informer missed a change for seconds and
// nothing recorded it (the detector's cache was behind too): a release was
// written with the version the user had replaced (chaos seed 2026 with
// --settle-every 100, step 440). A release now confirms the template with
// the API server and waits for the cache when its content moved on.
func TestAReleaseIsNotBuiltFromATemplateTheCacheHasNotCaughtUpWith(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}, interceptor.Funcs{})
	b.setImage(t, "nginx:1.27")
	b.reconcile(t)
	stale := b.staleTemplate(t) // at 1.27; nothing else will know of 1.28
	b.setImage(t, "nginx:1.28")
	// As the API server does for a change of spec (the fake client does not).
	dep := &appsv1.Deployment{}
	if err := b.hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Generation++
	if err := b.hub.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	rb.Spec.Suspension = nil // resumed, in the policy and (the detector) the binding
	if err := b.hub.Update(ctx, rb); err != nil {
		t.Fatal(err)
	}
	pp := b.policy(t)
	pp.Spec.Suspension = nil
	if err := b.hub.Update(ctx, pp); err != nil {
		t.Fatal(err)
	}
	b.works.Client, b.works.APIReader = stale, b.hub
	b.reconcile(t)
	for _, cluster := range []string{"member1", "member2"} {
		w := b.work(t, cluster)
		if !ptr.Deref(w.Spec.SuspendDispatching, false) && workImage(w) != "nginx:1.28" {
			t.Errorf("%s: released with %q while the template is at nginx:1.28", cluster, workImage(w))
		}
	}
}

// A policy being deleted releases nothing new. The chaos checker (seed
// 2026, run 6) saw a version written 270 ms after the policy's deletion
// reach two members while no policy claimed the template: after a hub
// restart the replica's policy cache had not seen the deletion, its
// template cache had seen the change, and the release's confirming read
// found the policy still there, held by its finalizer. The Works keep
// what they last had until a policy claims the template again.
func TestAPolicyBeingDeletedReleasesNothingNew(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.setImage(t, "nginx:1.27")
	b.reconcile(t)
	for _, cluster := range []string{"member1", "member2"} {
		if w := b.work(t, cluster); ptr.Deref(w.Spec.SuspendDispatching, false) || workImage(w) != "nginx:1.27" {
			t.Fatalf("%s: %q, held %v; want nginx:1.27 released", cluster, workImage(w), w.Spec.SuspendDispatching)
		}
	}

	// The cache keeps the policy as it was; the API server has it being
	// deleted (Karmada's finalizer holds it until the detector lets go).
	cached := b.policy(t)
	pp := b.policy(t)
	pp.Finalizers = []string{"karmada.io/propagation-policy-controller"}
	if err := b.hub.Update(ctx, pp); err != nil {
		t.Fatal(err)
	}
	if err := b.hub.Delete(ctx, pp); err != nil {
		t.Fatal(err)
	}
	b.setImage(t, "nginx:1.28")
	dep := &appsv1.Deployment{}
	if err := b.hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Generation++ // as the API server does for a change of spec
	if err := b.hub.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	b.works.Client = interceptor.NewClient(b.hub.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			switch o := obj.(type) {
			case *policyv1alpha1.PropagationPolicy:
				cached.DeepCopyInto(o)
				return nil
			case *unstructured.Unstructured:
				if o.GetKind() == "PropagationPolicy" {
					raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cached)
					if err != nil {
						return err
					}
					o.Object = raw
					o.SetAPIVersion("policy.karmada.io/v1alpha1")
					o.SetKind("PropagationPolicy")
					return nil
				}
			}
			return c.Get(ctx, key, obj, opts...)
		}})
	b.works.APIReader = b.hub
	if _, err := b.works.Reconcile(ctx, ctrl.Request{NamespacedName: bindingKey}); err != nil && !apierrors.IsConflict(err) {
		t.Fatalf("reconcile: %v", err)
	}
	for _, cluster := range []string{"member1", "member2"} {
		if w := b.work(t, cluster); !ptr.Deref(w.Spec.SuspendDispatching, false) && workImage(w) == "nginx:1.28" {
			t.Errorf("%s: nginx:1.28 released while its policy is being deleted", cluster)
		}
	}
}

// A binding whose template is gone is deleted by the binding controller
// once the API server confirms it, and its Works with it: a template
// deleted while no replica led brings the new leader's detector no event,
// and its Works, released from before, were dispatched (the chaos checker,
// seed 2026 run 7: a member stored a version 2.6 s after its template's
// deletion). A template only the cache lacks is waited for.
func TestABindingWhoseTemplateIsGoneGoesWithItsWorks(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.setImage(t, "nginx:1.27")
	b.reconcile(t)
	dep := &appsv1.Deployment{}
	if err := b.hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}

	// The cache no longer has the template; the API server still does.
	b.works.Client = interceptor.NewClient(b.hub.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if u, ok := obj.(*unstructured.Unstructured); ok && u.GetKind() == "Deployment" {
				return apierrors.NewNotFound(appsv1.Resource("deployments"), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		}})
	b.works.APIReader = b.hub
	if _, err := b.works.Reconcile(ctx, ctrl.Request{NamespacedName: bindingKey}); err != nil && !apierrors.IsConflict(err) {
		t.Fatalf("reconcile: %v", err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil || !rb.DeletionTimestamp.IsZero() {
		t.Fatalf("the binding went while its template is still on the API server: %v, deleting %v", err, rb.DeletionTimestamp)
	}

	// Gone from the API server too.
	if err := b.hub.Delete(ctx, dep); err != nil {
		t.Fatal(err)
	}
	b.reconcile(t)
	b.reconcile(t) // the binding being deleted: its Works go
	for _, cluster := range []string{"member1", "member2"} {
		w := &workv1alpha1.WorkList{}
		if err := b.hub.List(ctx, w, client.InNamespace("karmada-es-"+cluster)); err != nil {
			t.Fatal(err)
		}
		for _, work := range w.Items {
			if work.DeletionTimestamp.IsZero() {
				t.Errorf("%s: Work %s stays, its template gone: it would be dispatched", cluster, work.Name)
			}
		}
	}
	if err := b.hub.Get(ctx, bindingKey, rb); err == nil && rb.DeletionTimestamp.IsZero() {
		t.Error("the binding of a template gone from the API server stays")
	}
}
