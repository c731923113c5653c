package binding

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	karmadautil "github.com/karmada-io/karmada/pkg/util"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/federator-dev/federator/internal/fixture"
	"github.com/federator-dev/federator/internal/manifest"
	"github.com/federator-dev/federator/internal/overrides"
)

// What a Work carries once override policies apply, through Karmada's own
// override manager: the overrides run after the replicas are revised and
// before the hub's identifying labels are set, ClusterOverridePolicies
// before OverridePolicies, and what applied is recorded in Karmada's
// annotations.
func TestManifestWithOverrides(t *testing.T) {
	rule := func(target []string, o policyv1alpha1.Overriders) policyv1alpha1.RuleWithCluster {
		r := policyv1alpha1.RuleWithCluster{Overriders: o}
		if target != nil {
			r.TargetCluster = &policyv1alpha1.ClusterAffinity{ClusterNames: target}
		}
		return r
	}
	deploymentSelector := []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	op := func(name string, selectors []policyv1alpha1.ResourceSelector, rules ...policyv1alpha1.RuleWithCluster) client.Object {
		return &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: policyv1alpha1.OverrideSpec{ResourceSelectors: selectors, OverrideRules: rules}}
	}
	cop := func(name string, rules ...policyv1alpha1.RuleWithCluster) client.Object {
		return &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: policyv1alpha1.OverrideSpec{OverrideRules: rules}}
	}
	labels := func(kv map[string]string) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			{Operator: policyv1alpha1.OverriderOpAdd, Value: kv}}}
	}
	canaryTag := policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
		{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "1.27-canary"}}}
	raw := func(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

	for _, tc := range []struct {
		name     string
		cluster  string
		policies []client.Object
		// checks of the manifest, by what they read
		wantImage, wantLabel, wantConflict string
		wantReplicas                       int64
		// the applied-cluster-overrides and applied-overrides annotations
		wantCOP, wantOP string
	}{
		{name: "no policy: the template as it is, nothing recorded", cluster: "member1",
			wantImage: "nginx:1.25", wantReplicas: 2, wantConflict: "abort"},
		{name: "an image tag for the canary cluster only: member1 gets it", cluster: "member1",
			policies:  []client.Object{op("canary", deploymentSelector, rule([]string{"member1"}, canaryTag))},
			wantImage: "nginx:1.27-canary", wantReplicas: 2, wantConflict: "abort",
			wantOP: `[{"policyName":"canary","overriders":{"imageOverrider":[{"component":"Tag","operator":"replace","value":"1.27-canary"}]}}]`},
		{name: "an image tag for the canary cluster only: member2 does not", cluster: "member2",
			policies:  []client.Object{op("canary", deploymentSelector, rule([]string{"member1"}, canaryTag))},
			wantImage: "nginx:1.25", wantReplicas: 2, wantConflict: "abort"},
		{name: "a policy selecting another template does not apply", cluster: "member1",
			policies: []client.Object{op("canary", []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "cart"}},
				rule(nil, canaryTag))},
			wantImage: "nginx:1.25", wantReplicas: 2, wantConflict: "abort"},
		{name: "ClusterOverridePolicy first, then OverridePolicy: the namespaced one has the last word", cluster: "member1",
			policies:  []client.Object{op("a-team", nil, rule(nil, labels(map[string]string{"tier": "op"}))), cop("z-platform", rule(nil, labels(map[string]string{"tier": "cop"})))},
			wantImage: "nginx:1.25", wantReplicas: 2, wantLabel: "op", wantConflict: "abort",
			wantCOP: `[{"policyName":"z-platform","overriders":{"labelsOverrider":[{"operator":"add","value":{"tier":"cop"}}]}}]`,
			wantOP:  `[{"policyName":"a-team","overriders":{"labelsOverrider":[{"operator":"add","value":{"tier":"op"}}]}}]`},
		{name: "among OverridePolicies a name selector outranks select-all, whatever the names", cluster: "member1",
			policies: []client.Object{op("a-named", deploymentSelector, rule(nil, labels(map[string]string{"tier": "named"}))),
				op("b-all", nil, rule(nil, labels(map[string]string{"tier": "all"})))},
			wantImage: "nginx:1.25", wantReplicas: 2, wantLabel: "named", wantConflict: "abort",
			wantOP: `[{"policyName":"a-named","overriders":{"labelsOverrider":[{"operator":"add","value":{"tier":"named"}}]}},{"policyName":"b-all","overriders":{"labelsOverrider":[{"operator":"add","value":{"tier":"all"}}]}}]`},
		{name: "a plaintext patch of replicas wins over the binding's share", cluster: "member1",
			policies: []client.Object{op("small", deploymentSelector, rule(nil, policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
				{Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: raw("1")}}}))},
			wantImage: "nginx:1.25", wantReplicas: 1, wantConflict: "abort",
			wantOP: `[{"policyName":"small","overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":1}]}}]`},
		{name: "an override may set the conflict resolution, as Karmada reads it after the overrides", cluster: "member1",
			policies: []client.Object{op("take-over", deploymentSelector, rule(nil, policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
				{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{workv1alpha2.ResourceConflictResolutionAnnotation: "overwrite"}}}}))},
			wantImage: "nginx:1.25", wantReplicas: 2, wantConflict: "overwrite",
			wantOP: `[{"policyName":"take-over","overriders":{"annotationsOverrider":[{"operator":"add","value":{"work.karmada.io/conflict-resolution":"overwrite"}}]}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := append([]client.Object{
				&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
				&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}},
			}, tc.policies...)
			c := fakeHub().WithObjects(objs...).Build()
			m, applied, err := manifest.Render(overriddenTemplate(t), workv1alpha2.TargetCluster{Name: tc.cluster, Replicas: 2}, true,
				manifest.Origin{WorkNamespace: "karmada-es-" + tc.cluster, WorkName: "web"}, overrides.Karmada(c))
			if err != nil {
				t.Fatal(err)
			}
			image := ""
			containers, _, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers")
			if len(containers) > 0 {
				image, _ = containers[0].(map[string]any)["image"].(string)
			}
			replicas, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas")
			if image != tc.wantImage || replicas != tc.wantReplicas || m.GetLabels()["tier"] != tc.wantLabel ||
				m.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation] != tc.wantConflict {
				t.Errorf("image %q replicas %d label tier %q conflict %q; want %q %d %q %q", image, replicas, m.GetLabels()["tier"],
					m.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation], tc.wantImage, tc.wantReplicas, tc.wantLabel, tc.wantConflict)
			}
			if got := applied[karmadautil.AppliedClusterOverrides]; got != tc.wantCOP {
				t.Errorf("applied-cluster-overrides =\n %s\nwant\n %s", got, tc.wantCOP)
			}
			if got := applied[karmadautil.AppliedOverrides]; got != tc.wantOP {
				t.Errorf("applied-overrides =\n %s\nwant\n %s", got, tc.wantOP)
			}
			if m.GetLabels()["karmada.io/managed"] != "true" || m.GetResourceVersion() != "" || m.Object["status"] != nil {
				t.Errorf("the overridden manifest lost the hub's labels or kept hub-only fields: %v", m.Object["metadata"])
			}
		})
	}
}

// Bad input: an override that cannot be applied fails the cluster's
// manifest with an *overrides.Error naming the policy and the rule (its
// place in spec.overrideRules, whichever clusters the rules before it
// target) and Karmada's reason. An image overrider without a predicate on a
// kind without containers is no failure: Karmada applies nothing, so a
// policy selecting everything keeps working on ConfigMaps and Services.
func TestOverrideBadInput(t *testing.T) {
	const configMapYAML = `
apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: shop}
data:
  app-json: 'log: level'
  app-yaml: 'log: [unclosed'
`
	raw := func(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }
	rules := func(r ...policyv1alpha1.RuleWithCluster) policyv1alpha1.OverrideSpec {
		return policyv1alpha1.OverrideSpec{OverrideRules: r}
	}
	op := func(name string, spec policyv1alpha1.OverrideSpec) client.Object {
		return &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Spec: spec}
	}
	labels := policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
		{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"tier": "web"}}}}
	removeMissing := policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
		{Path: "/spec/nothing/here", Operator: policyv1alpha1.OverriderOpRemove}}}
	onMember2 := &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}
	fields := func(f policyv1alpha1.FieldOverrider) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{f}}
	}
	tag := func(predicate *policyv1alpha1.ImagePredicate) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Predicate: predicate, Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "canary"}}}
	}
	for _, tc := range []struct {
		name     string
		template string
		policy   client.Object
		// wantErr is the start of the error, then what Karmada says
		wantErr, wantWhy string
	}{
		{name: "a JSON patch to a missing path, in the third rule (the first is for another cluster)", template: fixture.WebDeploymentYAML,
			policy: op("broken", rules(policyv1alpha1.RuleWithCluster{TargetCluster: onMember2, Overriders: removeMissing},
				policyv1alpha1.RuleWithCluster{Overriders: labels}, policyv1alpha1.RuleWithCluster{Overriders: removeMissing})),
			wantErr: "OverridePolicy shop/broken spec.overrideRules[2] cannot be applied: ", wantWhy: "/spec/nothing/here"},
		{name: "an image overrider whose predicate path a ConfigMap does not have", template: configMapYAML,
			policy:  op("canary", rules(policyv1alpha1.RuleWithCluster{Overriders: tag(&policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/0/image"})})),
			wantErr: "OverridePolicy shop/canary spec.overrideRules[0] cannot be applied: ", wantWhy: "failed to obtain imageValue with predicate path(/spec/template/spec/containers/0/image)"},
		{name: "an image overrider without a predicate on a ConfigMap applies nothing, as in Karmada", template: configMapYAML,
			policy: op("canary", rules(policyv1alpha1.RuleWithCluster{Overriders: tag(nil)}))},
		{name: "a fieldOverrider's JSON patch on a field that is not JSON", template: configMapYAML,
			policy: op("debug", rules(policyv1alpha1.RuleWithCluster{Overriders: fields(policyv1alpha1.FieldOverrider{FieldPath: "/data/app-json",
				JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/log/level", Operator: policyv1alpha1.OverriderOpReplace, Value: raw(`"debug"`)}}})})),
			wantErr: "OverridePolicy shop/debug spec.overrideRules[0] cannot be applied: ", wantWhy: "invalid state detected"},
		{name: "a fieldOverrider's YAML patch on a field that is not YAML", template: configMapYAML,
			policy: op("debug", rules(policyv1alpha1.RuleWithCluster{Overriders: fields(policyv1alpha1.FieldOverrider{FieldPath: "/data/app-yaml",
				YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/log/level", Operator: policyv1alpha1.OverriderOpReplace, Value: raw(`"debug"`)}}})})),
			wantErr: "OverridePolicy shop/debug spec.overrideRules[0] cannot be applied: ", wantWhy: "yaml: line 1: did not find expected"},
		{name: "a fieldOverrider on a field that is not there, in a ClusterOverridePolicy", template: configMapYAML,
			policy: &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "platform"},
				Spec: rules(policyv1alpha1.RuleWithCluster{Overriders: fields(policyv1alpha1.FieldOverrider{FieldPath: "/data/missing",
					JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: policyv1alpha1.OverriderOpRemove}}})})},
			wantErr: "ClusterOverridePolicy platform spec.overrideRules[0] cannot be applied: ", wantWhy: "missing"},
		{name: "a policy in the deprecated form without rules is named by spec.overriders", template: fixture.WebDeploymentYAML,
			//lint:ignore SA1019 Karmada still applies the deprecated form, so its failure must be named too.
			policy:  op("old", policyv1alpha1.OverrideSpec{Overriders: removeMissing}),
			wantErr: "OverridePolicy shop/old spec.overriders cannot be applied: ", wantWhy: "/spec/nothing/here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeHub().WithObjects(
				&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}, tc.policy).Build()
			tpl := fixture.Template(t, tc.template)
			tpl.SetOwnerReferences(nil)
			m, _, err := manifest.Render(tpl, workv1alpha2.TargetCluster{Name: "member1"}, false,
				manifest.Origin{WorkNamespace: "karmada-es-member1", WorkName: "web"}, overrides.Karmada(c))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got, want := m.Object["data"], tpl.Object["data"]; !equality.Semantic.DeepEqual(got, want) {
					t.Errorf("data = %v, want it unchanged", got)
				}
				return
			}
			var bad *overrides.Error
			if !errors.As(err, &bad) {
				t.Fatalf("err = %v (%T), want an *overrides.Error", err, err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, tc.wantErr) || !strings.Contains(msg, tc.wantWhy) {
				t.Errorf("err = %q, want it to start %q and say %q", msg, tc.wantErr, tc.wantWhy)
			}
		})
	}
}

// An override policy's change re-renders the bindings whose templates it
// may select: by kind, namespace and name, read through an index.
func TestOverriddenBindings(t *testing.T) {
	rb := func(ns, name, apiVersion, kind, template string) client.Object {
		return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: template}}}
	}
	crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "ops-namespace"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "ops"}}}
	c := fakeHub().
		WithObjects(rb("shop", "web-deployment", "apps/v1", "Deployment", "web"), rb("shop", "cart-deployment", "apps/v1", "Deployment", "cart"),
			rb("shop", "web-configmap", "v1", "ConfigMap", "web"), rb("blog", "web-deployment", "apps/v1", "Deployment", "web"), crb).
		WithIndex(&workv1alpha2.ResourceBinding{}, ResourceKindIndex, resourceKind).
		WithIndex(&workv1alpha2.ClusterResourceBinding{}, ResourceKindIndex, resourceKind).Build()
	sel := func(apiVersion, kind, ns, name string) policyv1alpha1.ResourceSelector {
		return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}
	}
	spec := func(s ...policyv1alpha1.ResourceSelector) policyv1alpha1.OverrideSpec {
		return policyv1alpha1.OverrideSpec{ResourceSelectors: s}
	}
	names := func(reqs []reconcile.Request) []string {
		var out []string
		for _, r := range reqs {
			out = append(out, types.NamespacedName(r.NamespacedName).String())
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		policy        client.Object
		clusterScoped bool
		want          []string
	}{
		{"an OverridePolicy for one Deployment", &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p"},
			Spec: spec(sel("apps/v1", "Deployment", "", "web"))}, false, []string{"shop/web-deployment"}},
		{"an OverridePolicy for every Deployment of its namespace", &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p"},
			Spec: spec(sel("apps/v1", "Deployment", "", ""))}, false, []string{"shop/cart-deployment", "shop/web-deployment"}},
		{"an OverridePolicy without selectors: everything in its namespace", &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "blog", Name: "p"}},
			false, []string{"blog/web-deployment"}},
		{"an OverridePolicy never selects a cluster-scoped template", &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p"}},
			true, nil},
		{"a ClusterOverridePolicy for Deployments named web, in every namespace", &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec: spec(sel("apps/v1", "Deployment", "", "web"))}, false, []string{"blog/web-deployment", "shop/web-deployment"}},
		{"a ClusterOverridePolicy for one namespace", &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec: spec(sel("apps/v1", "Deployment", "blog", ""))}, false, []string{"blog/web-deployment"}},
		{"a ClusterOverridePolicy for Namespaces", &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec: spec(sel("v1", "Namespace", "", ""))}, true, []string{"/ops-namespace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(overriddenBindings(context.Background(), c, tc.clusterScoped, tc.policy))
			if strings.Join(slices.Sorted(slices.Values(got)), ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// overriddenTemplate is the test Deployment without the owner reference
// whose uid is a number: Karmada's image overrider converts the object to a
// typed Deployment, which a real template always is.
func overriddenTemplate(t *testing.T) *unstructured.Unstructured {
	u := fixture.Template(t, fixture.WebDeploymentYAML)
	u.SetOwnerReferences(nil)
	return u
}
