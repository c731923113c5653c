package detector

import (
	"context"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// A policy carries Karmada's finalizer; deleted, it goes only once what
// held in it is on the bindings it claimed: a suspension and a hold
// annotation written a moment before a GitOps prune, which no controller
// had taken in yet, still hold (found by the chaos checker, seed 2026).
func TestADeletedPolicyLeavesItsHoldsOnItsBindings(t *testing.T) {
	ctx := context.Background()
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 1, UID: "3d0c5b1e-policy"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}}}}
	claimed := func(name, policyName string) *workv1alpha2.ResourceBinding {
		return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
			Annotations: map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "shop",
				policyv1alpha1.PropagationPolicyNameAnnotation: policyName}}}
	}
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).
		WithObjects(pp, claimed("web-deployment", "web"), claimed("other-deployment", "other"),
			&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
			&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}).Build()
	d := &Reconciler{client: c, recorder: record.NewFakeRecorder(10), noPolicyStatus: true,
		watched: map[schema.GroupVersionKind]bool{appsv1.SchemeGroupVersion.WithKind("Deployment"): true}}
	r := (&policyReconciler{d: d}).forKind(pp)
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(pp)}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	reconcile()
	if err := c.Get(ctx, client.ObjectKeyFromObject(pp), pp); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(pp, "karmada.io/propagation-policy-controller") {
		t.Fatalf("the policy has no finalizer: %v", pp.Finalizers)
	}
	// Karmada's webhook labels a policy with its permanent ID; Karmada's
	// e2e suite selects the policy's bindings by that label's value.
	if got := pp.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]; got == "" || got != string(pp.UID) {
		t.Fatalf("the policy's %s label is %q, want its UID %q (the ID its bindings carry)",
			policyv1alpha1.PropagationPolicyPermanentIDLabel, got, pp.UID)
	}

	// Suspended for member2 and annotated, then pruned before any
	// controller took either in.
	pp.Spec.Suspension = &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}}
	pp.Annotations = map[string]string{"suspended.propagation.federator.dev/member1": "look first", "unrelated": "x"}
	if err := c.Update(ctx, pp); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, pp); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if err := c.Get(ctx, client.ObjectKeyFromObject(pp), &policyv1alpha1.PropagationPolicy{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the deleted policy was not let go: %v", err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	if s := rb.Spec.Suspension; s == nil || s.DispatchingOnClusters == nil || len(s.DispatchingOnClusters.ClusterNames) != 1 ||
		s.DispatchingOnClusters.ClusterNames[0] != "member2" || ptr.Deref(s.Dispatching, false) {
		t.Errorf("the binding's suspension is %+v, want the policy's last one (member2)", s)
	}
	if got, want := rb.Annotations[workkeys.PolicyHoldsAnnotation], `{"suspended.propagation.federator.dev/member1":"look first"}`; got != want {
		t.Errorf("%s = %q, want %q", workkeys.PolicyHoldsAnnotation, got, want)
	}
	other := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "other-deployment"}, other); err != nil {
		t.Fatal(err)
	}
	if other.Spec.Suspension != nil || other.Annotations[workkeys.PolicyHoldsAnnotation] != "" {
		t.Errorf("a binding another policy claims was given this policy's holds: %+v %v", other.Spec.Suspension, other.Annotations)
	}
}
