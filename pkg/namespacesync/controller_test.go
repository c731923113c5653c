package namespacesync

import (
	"context"
	"slices"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

func clusterOverridePolicy(name string, selectors []policyv1alpha1.ResourceSelector, o policyv1alpha1.Overriders) *policyv1alpha1.ClusterOverridePolicy {
	return &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1alpha1.OverrideSpec{ResourceSelectors: selectors, OverrideRules: []policyv1alpha1.RuleWithCluster{{
			TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Overriders: o}}}}
}

var opsSelector = []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace", Name: "ops"}}

// As Karmada's namespace sync controller: the ClusterOverridePolicies that
// select a namespace apply to it per cluster and are recorded on the Work;
// one that cannot be applied leaves that cluster's Work at its last
// manifest and names the policy and rule on it.
func TestClusterOverridePoliciesApplyToNamespaces(t *testing.T) {
	ctx := context.Background()
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops", Labels: map[string]string{"team": "ops"}}},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}},
		clusterOverridePolicy("canary-namespaces", opsSelector, policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"env": "canary"}}}}),
	).Build()
	r := &Reconciler{Client: hub}
	work := func(cluster string) *workv1alpha1.Work {
		t.Helper()
		w := &workv1alpha1.Work{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "karmada-es-" + cluster, Name: "ops-namespace"}, w); err != nil {
			list := &workv1alpha1.WorkList{}
			_ = hub.List(ctx, list, client.InNamespace("karmada-es-"+cluster))
			if len(list.Items) != 1 {
				t.Fatalf("Works in karmada-es-%s: %d", cluster, len(list.Items))
			}
			return &list.Items[0]
		}
		return w
	}
	labels := func(w *workv1alpha1.Work) map[string]string { return workkeys.FirstManifest(w).GetLabels() }
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: "ops"}}); err != nil {
		t.Fatal(err)
	}
	if got := labels(work("member2")); got["env"] != "canary" || got["team"] != "ops" || got["karmada.io/managed"] != "true" {
		t.Errorf("member2's namespace labels = %v, want env=canary beside its own and the managed label", got)
	}
	if got := work("member2").Annotations["policy.karmada.io/applied-cluster-overrides"]; got !=
		`[{"policyName":"canary-namespaces","overriders":{"labelsOverrider":[{"operator":"add","value":{"env":"canary"}}]}}]` {
		t.Errorf("member2's applied-cluster-overrides = %s", got)
	}
	if w := work("member1"); labels(w)["env"] != "" || w.Annotations["policy.karmada.io/applied-cluster-overrides"] != "" {
		t.Errorf("member1's namespace got the override: %v %v", labels(w), w.Annotations)
	}

	good := string(work("member2").Spec.Workload.Manifests[0].Raw)
	if err := hub.Create(ctx, clusterOverridePolicy("broken", opsSelector, policyv1alpha1.Overriders{
		Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/spec/nothing/here", Operator: policyv1alpha1.OverriderOpRemove}}})); err != nil {
		t.Fatal(err)
	}
	const why = "ClusterOverridePolicy broken spec.overrideRules[0] cannot be applied: "
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: "ops"}}); err == nil ||
		!strings.HasPrefix(err.Error(), "namespace ops, cluster member2: "+why) {
		t.Fatalf("reconcile with a broken override: %v, want it to name the namespace, cluster, policy and rule", err)
	}
	w := work("member2")
	if got := string(w.Spec.Workload.Manifests[0].Raw); got != good {
		t.Errorf("member2's Work changed to %s, want its last good manifest %s", got, good)
	}
	if got := w.Annotations["work.federator.dev/override-failed"]; !strings.HasPrefix(got, why) {
		t.Errorf("member2's override-failed = %q, want it to start %q", got, why)
	}
	if w.Annotations["policy.karmada.io/applied-cluster-overrides"] == "" {
		t.Errorf("member2's record of applied overrides went with the failure: %v", w.Annotations)
	}
}

// A ClusterOverridePolicy's change renders again the namespaces it may
// select: those named, all when a Namespace selector names none (as
// Karmada's namespace sync watch) or when it has no selectors (which
// Karmada's override manager applies to namespaces too).
func TestOverriddenNamespaces(t *testing.T) {
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}).Build()
	for _, tc := range []struct {
		name      string
		selectors []policyv1alpha1.ResourceSelector
		want      []string
	}{
		{"a Namespace by name", opsSelector, []string{"ops"}},
		{"Namespaces by label: every namespace", []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}, []string{"ops", "shop"}},
		{"no selectors: every namespace", nil, []string{"ops", "shop"}},
		{"only Deployments: no namespace", []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range overriddenNamespaces(context.Background(), hub, clusterOverridePolicy("p", tc.selectors, policyv1alpha1.Overriders{})) {
				got = append(got, r.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// A hub namespace skip-labelled while a template in it is held on member2:
// member1's namespace goes as before, member2's stays, its Work saying why
// and taken from the hub namespace's garbage collection, until the hold
// ends; labelled again for propagation, the Work is the namespace's again.
func TestANamespaceStaysWhereSomethingInItIsHeld(t *testing.T) {
	ctx := context.Background()
	shop := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "shop-uid"}}
	webOnMember2 := held(templateWork("shop", "web", ""), "suspended by annotation suspended.propagation.federator.dev/member2 on Deployment shop/web; remove the annotation to resume")
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(shop,
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}, &webOnMember2).
		WithIndex(&workv1alpha1.Work{}, manifestNamespaceIndex, manifestNamespaces).Build()
	recorder := record.NewFakeRecorder(10)
	r := &Reconciler{Client: hub, Recorder: recorder, Override: func(m *unstructured.Unstructured, _ string) (map[string]string, error) {
		return nil, nil
	}}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: "shop"}}); err != nil {
			t.Fatal(err)
		}
	}
	namespaceWork := func(cluster string) *workv1alpha1.Work {
		t.Helper()
		w := &workv1alpha1.Work{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "karmada-es-" + cluster, Name: names.GenerateWorkName("Namespace", "shop", "")}, w); err != nil {
			return nil
		}
		return w
	}
	gone := func(cluster string) bool {
		w := namespaceWork(cluster)
		return w == nil || !w.DeletionTimestamp.IsZero()
	}
	label := func(value string) {
		t.Helper()
		if err := hub.Get(ctx, client.ObjectKeyFromObject(shop), shop); err != nil {
			t.Fatal(err)
		}
		shop.Labels = map[string]string{"namespace.karmada.io/skip-auto-propagation": value}
		if err := hub.Update(ctx, shop); err != nil {
			t.Fatal(err)
		}
	}
	reconcile()
	if gone("member1") || gone("member2") {
		t.Fatal("the namespace is not propagated to both members")
	}

	label("true")
	reconcile()
	if !gone("member1") {
		t.Error("member1, where nothing is held, keeps the namespace")
	}
	kept := namespaceWork("member2")
	if kept == nil || !kept.DeletionTimestamp.IsZero() {
		t.Fatal("member2's namespace Work is deleted while Deployment shop/web is held there")
	}
	const why = "namespace shop kept in member2: Deployment shop/web is held (suspended by annotation " +
		"suspended.propagation.federator.dev/member2 on Deployment shop/web; remove the annotation to resume)"
	if got := kept.Annotations["namespace.federator.dev/kept"]; got != why {
		t.Errorf("kept annotation = %q, want %q", got, why)
	}
	if len(kept.OwnerReferences) != 0 {
		t.Errorf("the kept Work is still owned by the hub namespace (its garbage collection would delete it): %v", kept.OwnerReferences)
	}
	if got := <-recorder.Events; got != "Normal NamespaceKept "+why {
		t.Errorf("event %q", got)
	}
	reconcile()
	if len(recorder.Events) != 0 {
		t.Errorf("a second pass with the same reason sent %q", <-recorder.Events)
	}

	// The propagation again: the Work is the namespace's again (member1's,
	// deleted, is released by the dispatcher first).
	member1 := namespaceWork("member1")
	member1.Finalizers = nil
	if err := hub.Update(ctx, member1); err != nil {
		t.Fatal(err)
	}
	label("false")
	reconcile()
	if w := namespaceWork("member2"); w.Annotations["namespace.federator.dev/kept"] != "" || len(w.OwnerReferences) != 1 ||
		w.OwnerReferences[0].UID != "shop-uid" {
		t.Errorf("member2's Work after the label went: annotations %v, owners %v", w.Annotations, w.OwnerReferences)
	}

	label("true")
	reconcile()
	<-recorder.Events
	webOnMember2.Spec.SuspendDispatching = ptr.To(false)
	if err := hub.Update(ctx, &webOnMember2); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if !gone("member2") {
		t.Error("member2's namespace is kept after the hold ended")
	}
	if got := <-recorder.Events; got != "Normal NamespaceReleased namespace shop removed from member2: "+
		"nothing of the hub's in it is held or counting down there any more" {
		t.Errorf("event %q", got)
	}
}

// A hub namespace deleted while an object in it counts down in member1:
// member1's namespace Work stays until the countdown's record is gone, and
// the event goes to the Work, the hub namespace being gone.
func TestADeletedNamespaceWaitsForTheCountdownsInIt(t *testing.T) {
	ctx := context.Background()
	shop := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "shop-uid"}}
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(shop,
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}).
		WithIndex(&workv1alpha1.Work{}, manifestNamespaceIndex, manifestNamespaces).Build()
	recorder := record.NewFakeRecorder(10)
	r := &Reconciler{Client: hub, Recorder: recorder, Override: func(*unstructured.Unstructured, string) (map[string]string, error) {
		return nil, nil
	}}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: "shop"}}); err != nil {
			t.Fatal(err)
		}
	}
	key := client.ObjectKey{Namespace: "karmada-es-member1", Name: names.GenerateWorkName("Namespace", "shop", "")}
	reconcile()
	if err := hub.Delete(ctx, shop); err != nil {
		t.Fatal(err)
	}
	tombstone := countingDown("shop", "web", "20s")
	tombstone.Cluster = "member1"
	if err := hub.Create(ctx, tombstone.ConfigMap()); err != nil {
		t.Fatal(err)
	}
	reconcile()
	w := &workv1alpha1.Work{}
	if err := hub.Get(ctx, key, w); err != nil || !w.DeletionTimestamp.IsZero() {
		t.Fatalf("member1's namespace Work is gone while Deployment shop/web counts down there: %v", err)
	}
	const why = "namespace shop kept in member1: Deployment shop/web counts down until 2026-03-01T12:00:20Z (deletion delay 20s)"
	if got := <-recorder.Events; got != "Normal NamespaceKept "+why {
		t.Errorf("event %q", got)
	}

	if err := hub.Delete(ctx, tombstone.ConfigMap()); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if err := hub.Get(ctx, key, w); err == nil && w.DeletionTimestamp.IsZero() {
		t.Error("member1's namespace Work stays after the countdown ended")
	}
}
