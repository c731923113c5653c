package detector

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	appsv1alpha1 "github.com/karmada-io/karmada/pkg/apis/apps/v1alpha1"
	autoscalingv1alpha1 "github.com/karmada-io/karmada/pkg/apis/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/karmada-io/karmada/pkg/apis/config/v1alpha1"
	networkingv1alpha1 "github.com/karmada-io/karmada/pkg/apis/networking/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	remedyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/remedy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
)

func template(apiVersion, kind, ns, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(lbls)
	return u
}

func deployment(ns, name string, lbls map[string]string) *unstructured.Unstructured {
	return template("apps/v1", "Deployment", ns, name, lbls)
}

type policyOpt func(meta *metav1.ObjectMeta, spec *policyv1alpha1.PropagationSpec)

func priority(p int32) policyOpt {
	return func(_ *metav1.ObjectMeta, spec *policyv1alpha1.PropagationSpec) { spec.Priority = &p }
}

func deleting() policyOpt {
	return func(meta *metav1.ObjectMeta, _ *policyv1alpha1.PropagationSpec) {
		now := metav1.Now()
		meta.DeletionTimestamp = &now
	}
}

func selects(rs ...policyv1alpha1.ResourceSelector) policyOpt {
	return func(_ *metav1.ObjectMeta, spec *policyv1alpha1.PropagationSpec) {
		spec.ResourceSelectors = append(spec.ResourceSelectors, rs...)
	}
}

func pp(ns, name string, opts ...policyOpt) policyv1alpha1.PropagationPolicy {
	p := policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, o := range opts {
		o(&p.ObjectMeta, &p.Spec)
	}
	return p
}

func cpp(name string, opts ...policyOpt) policyv1alpha1.ClusterPropagationPolicy {
	p := policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, o := range opts {
		o(&p.ObjectMeta, &p.Spec)
	}
	return p
}

// Selectors for apps/v1 Deployments.
func byKind() policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
}

func byName(name string) policyv1alpha1.ResourceSelector {
	rs := byKind()
	rs.Name = name
	return rs
}

func byLabels(ml map[string]string, exprs ...metav1.LabelSelectorRequirement) policyv1alpha1.ResourceSelector {
	rs := byKind()
	rs.LabelSelector = &metav1.LabelSelector{MatchLabels: ml, MatchExpressions: exprs}
	return rs
}

func inNamespace(ns string, rs policyv1alpha1.ResourceSelector) policyv1alpha1.ResourceSelector {
	rs.Namespace = ns
	return rs
}

func TestMatch(t *testing.T) {
	web := map[string]string{"app": "web"}

	tests := []struct {
		name     string
		template *unstructured.Unstructured
		pps      []policyv1alpha1.PropagationPolicy
		cpps     []policyv1alpha1.ClusterPropagationPolicy
		// want is the winner's Key ("" for none); wantCluster tells
		// whether it is a ClusterPropagationPolicy.
		want        string
		wantCluster bool
	}{
		{
			name:     "kind-only selector matches",
			template: deployment("default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "all", selects(byKind()))},
			want:     "default/all",
		},
		{
			name:     "no policy selects the kind",
			template: deployment("default", "nginx", nil),
			pps: []policyv1alpha1.PropagationPolicy{pp("default", "svc", selects(policyv1alpha1.ResourceSelector{
				APIVersion: "v1", Kind: "Service",
			}))},
		},
		{
			name:     "no policies at all",
			template: deployment("default", "nginx", nil),
		},
		{
			name:     "name match beats labelSelector beats kind-only",
			template: deployment("default", "nginx", web),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "a-kind", selects(byKind())),
				pp("default", "b-label", selects(byLabels(web))),
				pp("default", "c-name", selects(byName("nginx"))),
			},
			want: "default/c-name",
		},
		{
			name:     "labelSelector beats kind-only",
			template: deployment("default", "nginx", web),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "a-kind", selects(byKind())),
				pp("default", "b-label", selects(byLabels(web))),
			},
			want: "default/b-label",
		},
		{
			name:     "a policy's best selector counts",
			template: deployment("default", "nginx", web),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "a-label", selects(byLabels(web))),
				pp("default", "b-kind-and-name", selects(byKind(), byName("nginx"))),
			},
			want: "default/b-kind-and-name",
		},
		{
			name:     "name set: labelSelector is ignored",
			template: deployment("default", "nginx", nil),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "named", selects(policyv1alpha1.ResourceSelector{
					APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx",
					LabelSelector: &metav1.LabelSelector{MatchLabels: web},
				})),
			},
			want: "default/named",
		},
		{
			name:     "name mismatch does not match",
			template: deployment("default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "other", selects(byName("redis")))},
		},
		{
			name:     "explicit priority beats selector priority",
			template: deployment("default", "nginx", web),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "a-name", selects(byName("nginx"))),
				pp("default", "b-kind", priority(1), selects(byKind())),
			},
			want: "default/b-kind",
		},
		{
			name:     "negative priority loses to unset priority",
			template: deployment("default", "nginx", nil),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "a-name", priority(-1), selects(byName("nginx"))),
				pp("default", "b-kind", selects(byKind())),
			},
			want: "default/b-kind",
		},
		{
			name:     "explicit priority 0 equals unset",
			template: deployment("default", "nginx", nil),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "a-kind", priority(0), selects(byKind())),
				pp("default", "b-name", selects(byName("nginx"))),
			},
			want: "default/b-name",
		},
		{
			name:     "PropagationPolicy in template namespace beats ClusterPropagationPolicy",
			template: deployment("default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "pp", selects(byKind()))},
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", priority(100), selects(byName("nginx")))},
			want:     "default/pp",
		},
		{
			name:     "ClusterPropagationPolicy when no PropagationPolicy selects",
			template: deployment("default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "other", selects(byName("redis")))},
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(byKind()))},
			want:     "cpp", wantCluster: true,
		},
		{
			name:     "PropagationPolicy in another namespace never matches",
			template: deployment("default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("other", "pp", selects(byName("nginx")))},
		},
		{
			name:     "PropagationPolicy in another namespace never matches, even naming the template's namespace",
			template: deployment("default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("other", "pp", selects(inNamespace("default", byName("nginx"))))},
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(byKind()))},
			want:     "cpp", wantCluster: true,
		},
		{
			name:     "selector namespace matches",
			template: deployment("team-a", "nginx", nil),
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("team-a", selects(inNamespace("team-a", byKind())))},
			want:     "team-a", wantCluster: true,
		},
		{
			name:     "selector namespace mismatch",
			template: deployment("team-b", "nginx", nil),
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("team-a", selects(inNamespace("team-a", byKind())))},
		},
		{
			name:     "selector namespace on a cluster-scoped template does not match",
			template: template("rbac.authorization.k8s.io/v1", "ClusterRole", "", "view", nil),
			cpps: []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(policyv1alpha1.ResourceSelector{
				APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Namespace: "default",
			}))},
		},
		{
			name:     "labelSelector matchExpressions In matches",
			template: deployment("default", "nginx", map[string]string{"tier": "frontend"}),
			pps: []policyv1alpha1.PropagationPolicy{pp("default", "expr", selects(byLabels(nil, metav1.LabelSelectorRequirement{
				Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"frontend", "edge"},
			})))},
			want: "default/expr",
		},
		{
			name:     "labelSelector matchExpressions NotIn excludes",
			template: deployment("default", "nginx", map[string]string{"tier": "frontend"}),
			pps: []policyv1alpha1.PropagationPolicy{pp("default", "expr", selects(byLabels(nil, metav1.LabelSelectorRequirement{
				Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"frontend"},
			})))},
		},
		{
			name:     "labelSelector matchLabels and matchExpressions must both hold",
			template: deployment("default", "nginx", map[string]string{"app": "web"}),
			pps: []policyv1alpha1.PropagationPolicy{pp("default", "expr", selects(byLabels(web, metav1.LabelSelectorRequirement{
				Key: "tier", Operator: metav1.LabelSelectorOpExists,
			})))},
		},
		{
			name:     "labelSelector not matching",
			template: deployment("default", "nginx", map[string]string{"app": "db"}),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "web", selects(byLabels(web)))},
		},
		{
			name:     "empty labelSelector matches everything at labelSelector priority",
			template: deployment("default", "nginx", nil),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "a-kind", selects(byKind())),
				pp("default", "b-empty-selector", selects(byLabels(nil))),
			},
			want: "default/b-empty-selector",
		},
		{
			name:     "invalid labelSelector matches nothing",
			template: deployment("default", "nginx", web),
			pps: []policyv1alpha1.PropagationPolicy{pp("default", "bad", selects(byLabels(nil, metav1.LabelSelectorRequirement{
				Key: "app", Operator: "Bogus", Values: []string{"web"},
			})))},
		},
		{
			name:     "apiVersion mismatch does not match",
			template: template("apps/v1beta1", "Deployment", "default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "v1", selects(byKind()))},
		},
		{
			name:     "kind mismatch does not match",
			template: template("apps/v1", "StatefulSet", "default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "deploy", selects(byKind()))},
		},
		{
			name:     "deleting PropagationPolicy is skipped",
			template: deployment("default", "nginx", nil),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "a-name", priority(10), deleting(), selects(byName("nginx"))),
				pp("default", "b-kind", selects(byKind())),
			},
			want: "default/b-kind",
		},
		{
			name:     "deleting PropagationPolicy falls through to ClusterPropagationPolicy",
			template: deployment("default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "pp", deleting(), selects(byKind()))},
			cpps: []policyv1alpha1.ClusterPropagationPolicy{
				cpp("a-deleting", priority(5), deleting(), selects(byKind())),
				cpp("b-live", selects(byKind())),
			},
			want: "b-live", wantCluster: true,
		},
		{
			name:     "all deleting: no claim",
			template: deployment("default", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "pp", deleting(), selects(byKind()))},
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", deleting(), selects(byKind()))},
		},
		{
			name:     "cluster-scoped template is matched by ClusterPropagationPolicy",
			template: template("v1", "Namespace", "", "team-a", nil),
			cpps: []policyv1alpha1.ClusterPropagationPolicy{cpp("ns", selects(policyv1alpha1.ResourceSelector{
				APIVersion: "v1", Kind: "Namespace", Name: "team-a",
			}))},
			want: "ns", wantCluster: true,
		},
		{
			name:     "cluster-scoped template is never matched by PropagationPolicy",
			template: template("rbac.authorization.k8s.io/v1", "ClusterRole", "", "view", nil),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("", "no-namespace", selects(policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"})),
				pp("default", "pp", selects(policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"})),
			},
		},
		{
			name:     "ClusterPropagationPolicy precedence: explicit priority first",
			template: deployment("default", "nginx", web),
			cpps: []policyv1alpha1.ClusterPropagationPolicy{
				cpp("a-name", selects(byName("nginx"))),
				cpp("b-kind", priority(3), selects(byKind())),
				cpp("c-label", priority(2), selects(byLabels(web))),
			},
			want: "b-kind", wantCluster: true,
		},
		{
			name:     "ClusterPropagationPolicy precedence: selector priority second",
			template: deployment("default", "nginx", web),
			cpps: []policyv1alpha1.ClusterPropagationPolicy{
				cpp("a-kind", selects(byKind())),
				cpp("b-label", selects(byLabels(web))),
			},
			want: "b-label", wantCluster: true,
		},
		{
			name:     "PropagationPolicy tie-break by name",
			template: deployment("default", "nginx", nil),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "zeta", selects(byKind())),
				pp("default", "alpha", selects(byKind())),
				pp("default", "mid", selects(byKind())),
			},
			want: "default/alpha",
		},
		{
			name:     "ClusterPropagationPolicy tie-break by name",
			template: deployment("default", "nginx", web),
			cpps: []policyv1alpha1.ClusterPropagationPolicy{
				cpp("b", priority(1), selects(byLabels(web))),
				cpp("a", priority(1), selects(byLabels(web))),
				cpp("0-lower", selects(byName("nginx"))),
			},
			want: "a", wantCluster: true,
		},
		{
			name:     "tie-break compares names bytewise",
			template: deployment("default", "nginx", nil),
			pps: []policyv1alpha1.PropagationPolicy{
				pp("default", "a1", selects(byKind())),
				pp("default", "a.1", selects(byKind())),
				pp("default", "a-1", selects(byKind())),
			},
			want: "default/a-1",
		},
		{
			name:     "reserved namespace karmada-system is skipped",
			template: deployment("karmada-system", "nginx", nil),
			pps:      []policyv1alpha1.PropagationPolicy{pp("karmada-system", "pp", selects(byKind()))},
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(byKind()))},
		},
		{
			name:     "execution namespace karmada-es-* is skipped",
			template: deployment("karmada-es-member1", "nginx", nil),
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(byKind()))},
		},
		{
			name:     "kube-* namespace is skipped",
			template: deployment("kube-system", "coredns", nil),
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(byKind()))},
		},
		{
			name:     "namespace containing kube- but not starting with it is not skipped",
			template: deployment("my-kube-apps", "nginx", nil),
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(byKind()))},
			want:     "cpp", wantCluster: true,
		},
		{
			name:     "the Namespace object kube-system is not skipped",
			template: template("v1", "Namespace", "", "kube-system", nil),
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Namespace"}))},
			want:     "cpp", wantCluster: true,
		},
		{
			name:     "template claimed by something else is skipped",
			template: deployment("default", "nginx", map[string]string{ResourceTemplateClaimedByLabel: "MultiClusterService"}),
			pps:      []policyv1alpha1.PropagationPolicy{pp("default", "pp", selects(byKind()))},
		},
		{
			name:     "skipped kind: Event",
			template: template("v1", "Event", "default", "e1", nil),
			cpps:     []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Event"}))},
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(t *testing.T, pps []policyv1alpha1.PropagationPolicy, cpps []policyv1alpha1.ClusterPropagationPolicy) {
				t.Helper()
				claim, ok := Match(tt.template, pps, cpps)
				if ok != (tt.want != "") {
					t.Fatalf("Match ok = %v (claim %q), want %v (claim %q)", ok, claim.Key(), !ok, tt.want)
				}
				if !ok {
					if claim.PropagationPolicy != nil || claim.ClusterPropagationPolicy != nil {
						t.Fatalf("no match but claim %q is set", claim.Key())
					}
					return
				}
				if got := claim.Key(); got != tt.want {
					t.Errorf("claim = %q, want %q", got, tt.want)
				}
				if (claim.PropagationPolicy != nil) == (claim.ClusterPropagationPolicy != nil) {
					t.Fatalf("exactly one policy must be set: %+v", claim)
				}
				if gotCluster := claim.ClusterPropagationPolicy != nil; gotCluster != tt.wantCluster {
					t.Errorf("claim is ClusterPropagationPolicy = %v, want %v", gotCluster, tt.wantCluster)
				}
			}
			check(t, tt.pps, tt.cpps)

			// The answer does not depend on the order the policies are listed in.
			pps, cpps := slices.Clone(tt.pps), slices.Clone(tt.cpps)
			slices.Reverse(pps)
			slices.Reverse(cpps)
			check(t, pps, cpps)
		})
	}
}

func TestMatchReturnsPointerIntoInput(t *testing.T) {
	pps := []policyv1alpha1.PropagationPolicy{pp("default", "pp", selects(byKind()))}
	claim, ok := Match(deployment("default", "nginx", nil), pps, nil)
	if !ok || claim.PropagationPolicy != &pps[0] {
		t.Fatalf("claim does not point at pps[0]: %+v", claim)
	}
	if claim.Spec() != &pps[0].Spec {
		t.Fatalf("Spec() does not point at the policy's spec")
	}

	cpps := []policyv1alpha1.ClusterPropagationPolicy{cpp("cpp", selects(byKind()))}
	claim, ok = Match(deployment("default", "nginx", nil), nil, cpps)
	if !ok || claim.ClusterPropagationPolicy != &cpps[0] || claim.Spec() != &cpps[0].Spec {
		t.Fatalf("claim does not point at cpps[0]: %+v", claim)
	}
}

func TestEmptyClaim(t *testing.T) {
	var c Claim
	if c.Spec() != nil || c.Key() != "" {
		t.Fatalf("empty claim: Spec %v, Key %q", c.Spec(), c.Key())
	}
	if _, ok := Match(nil, nil, nil); ok {
		t.Fatal("nil template matched")
	}
}

func TestSelectorsMatch(t *testing.T) {
	d := deployment("default", "nginx", map[string]string{"app": "web"})
	for _, tt := range []struct {
		name      string
		selectors []policyv1alpha1.ResourceSelector
		want      bool
	}{
		{"none", nil, false},
		{"kind", []policyv1alpha1.ResourceSelector{byKind()}, true},
		{"other name", []policyv1alpha1.ResourceSelector{byName("redis")}, false},
		{"other name or label", []policyv1alpha1.ResourceSelector{byName("redis"), byLabels(map[string]string{"app": "web"})}, true},
		{"other apiVersion", []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1beta2", Kind: "Deployment"}}, false},
	} {
		if got := SelectorsMatch(d, tt.selectors); got != tt.want {
			t.Errorf("%s: SelectorsMatch = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSelectorsReferenceGVK(t *testing.T) {
	selectors := []policyv1alpha1.ResourceSelector{
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default"},
	}
	for _, tt := range []struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, true},
		{schema.GroupVersionKind{Group: "", Version: "v1", Kind: "ConfigMap"}, true},
		{schema.GroupVersionKind{Group: "apps", Version: "v1beta1", Kind: "Deployment"}, false},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, false},
		{schema.GroupVersionKind{Group: "core", Version: "v1", Kind: "ConfigMap"}, false},
	} {
		if got := SelectorsReferenceGVK(selectors, tt.gvk); got != tt.want {
			t.Errorf("SelectorsReferenceGVK(%v) = %v, want %v", tt.gvk, got, tt.want)
		}
	}
	if SelectorsReferenceGVK(nil, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) {
		t.Error("no selectors reference a kind")
	}
}

func TestSkipped(t *testing.T) {
	for _, tt := range []struct {
		name     string
		template *unstructured.Unstructured
		want     bool
	}{
		{"ordinary Deployment", deployment("default", "nginx", nil), false},
		{"karmada-system", deployment("karmada-system", "x", nil), true},
		{"karmada-cluster", template("v1", "Secret", "karmada-cluster", "member1", nil), true},
		{"karmada-es-member1", template("v1", "ConfigMap", "karmada-es-member1", "x", nil), true},
		{"karmada-other is not reserved", deployment("karmada-other", "x", nil), false},
		{"kube-system", deployment("kube-system", "x", nil), true},
		{"kube-public", template("v1", "ConfigMap", "kube-public", "cluster-info", nil), true},
		{"kube-node-lease", template("v1", "ConfigMap", "kube-node-lease", "x", nil), true},
		{"kubeflow is not kube-*", deployment("kubeflow", "x", nil), false},
		{"extension-apiserver-authentication", template("v1", "ConfigMap", "kube-system", "extension-apiserver-authentication", nil), true},
		{"cluster-scoped Namespace kube-system", template("v1", "Namespace", "", "kube-system", nil), false},
		{"cluster-scoped Namespace karmada-system", template("v1", "Namespace", "", "karmada-system", nil), false},
		{"core Event", template("v1", "Event", "default", "e", nil), true},
		{"events.k8s.io Event", template("events.k8s.io/v1", "Event", "default", "e", nil), true},
		{"Lease v1", template("coordination.k8s.io/v1", "Lease", "default", "l", nil), true},
		{"Lease v1beta1 (only v1 is skipped)", template("coordination.k8s.io/v1beta1", "Lease", "default", "l", nil), false},
		{"PropagationPolicy", template("policy.karmada.io/v1alpha1", "PropagationPolicy", "default", "p", nil), true},
		{"Work", template("work.karmada.io/v1alpha1", "Work", "default", "w", nil), true},
		{"ResourceBinding", template("work.karmada.io/v1alpha2", "ResourceBinding", "default", "rb", nil), true},
		{"Cluster", template("cluster.karmada.io/v1alpha1", "Cluster", "", "member1", nil), true},
		{"claimed-by label", deployment("default", "x", map[string]string{ResourceTemplateClaimedByLabel: "mcs"}), true},
		{"empty claimed-by label", deployment("default", "x", map[string]string{ResourceTemplateClaimedByLabel: ""}), false},
	} {
		if got := Skipped(tt.template); got != tt.want {
			t.Errorf("%s: Skipped = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestSkippedGroupsAreKarmadas pins the skipped API groups to the group names
// Karmada's own packages declare, so a typo or an upgrade that renames one
// shows up here.
func TestSkippedGroupsAreKarmadas(t *testing.T) {
	for _, g := range []string{
		clusterv1alpha1.GroupVersion.Group,
		policyv1alpha1.GroupVersion.Group,
		workv1alpha1.GroupVersion.Group,
		configv1alpha1.GroupVersion.Group,
		networkingv1alpha1.GroupVersion.Group,
		autoscalingv1alpha1.GroupVersion.Group,
		remedyv1alpha1.GroupVersion.Group,
		appsv1alpha1.GroupVersion.Group,
	} {
		if !SkippedGVK(schema.GroupVersionKind{Group: g, Version: "v1alpha1", Kind: "Anything"}) {
			t.Errorf("group %q is not skipped", g)
		}
	}
	if SkippedGVK(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) {
		t.Error("apps/v1 Deployment is skipped")
	}
}

// The matchLabels fast path answers exactly as the library does.
func TestLabelSelectorMatchesAsLibrary(t *testing.T) {
	sets := []labels.Set{
		nil,
		{},
		{"app": "web"},
		{"app": "web", "tier": "frontend"},
		{"app": "api"},
	}
	selectors := []*metav1.LabelSelector{
		{},
		{MatchLabels: map[string]string{}},
		{MatchLabels: map[string]string{"app": "web"}},
		{MatchLabels: map[string]string{"app": "web", "tier": "frontend"}},
		{MatchLabels: map[string]string{"app": ""}},
		{MatchLabels: map[string]string{"app": "not a valid value"}},
		{MatchLabels: map[string]string{"not a valid key": "web"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpDoesNotExist}}},
		{MatchLabels: map[string]string{"app": "web"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}},
	}
	for _, s := range selectors {
		for _, set := range sets {
			want := false
			if sel, err := metav1.LabelSelectorAsSelector(s); err == nil {
				want = sel.Matches(set)
			}
			if got := labelSelectorMatches(s, set); got != want {
				t.Errorf("selector %v on labels %v: got %v, the library says %v", s, set, got, want)
			}
		}
	}
}
