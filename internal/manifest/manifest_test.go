package manifest

import (
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federator-dev/federator/internal/fixture"
	"github.com/federator-dev/federator/internal/overrides"
)

func TestManifest(t *testing.T) {
	origin := Origin{BindingNamespace: "shop", BindingName: "web-deployment", BindingID: "rb-id",
		WorkNamespace: "karmada-es-member1", WorkName: "web-xyz"}
	for _, tc := range []struct {
		name         string
		revise       bool
		origin       Origin
		template     func(*unstructured.Unstructured)
		wantReplicas int64
		wantConflict string
		wantLabel    [2]string
		wantAnno     [2]string
	}{
		{name: "duplicated keeps template replicas", wantReplicas: 6, wantConflict: "abort",
			wantLabel: [2]string{workv1alpha2.ResourceBindingPermanentIDLabel, "rb-id"},
			wantAnno:  [2]string{workv1alpha2.ResourceBindingNameAnnotationKey, "web-deployment"}},
		{name: "divided writes the cluster's share", revise: true, wantReplicas: 2, wantConflict: "abort",
			wantLabel: [2]string{"karmada.io/managed", "true"},
			wantAnno:  [2]string{workv1alpha2.WorkNameAnnotation, "web-xyz"}},
		{name: "policy overwrite", origin: Origin{ConflictResolution: policyv1alpha1.ConflictOverwrite},
			wantReplicas: 6, wantConflict: "overwrite",
			wantLabel: [2]string{"app", "web"},
			wantAnno:  [2]string{workv1alpha2.ResourceTemplateUIDAnnotation, "0b4f5e3a-1111-2222-3333-444455556666"}},
		{name: "template annotation beats policy",
			origin: Origin{ConflictResolution: policyv1alpha1.ConflictOverwrite},
			template: func(u *unstructured.Unstructured) {
				a := u.GetAnnotations()
				a[workv1alpha2.ResourceConflictResolutionAnnotation] = "abort"
				u.SetAnnotations(a)
			},
			wantReplicas: 6, wantConflict: "abort",
			wantLabel: [2]string{"karmada.io/managed", "true"}},
		{name: "cluster-scoped binding keys", origin: Origin{ClusterScoped: true, BindingName: "crb", BindingID: "crb-id"},
			wantReplicas: 6, wantConflict: "abort",
			wantLabel: [2]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel, "crb-id"},
			wantAnno:  [2]string{workv1alpha2.ClusterResourceBindingAnnotationKey, "crb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := fixture.Template(t, fixture.WebDeploymentYAML)
			if tc.template != nil {
				tc.template(tmpl)
			}
			o := origin
			if tc.origin.ConflictResolution != "" || tc.origin.ClusterScoped {
				o.ConflictResolution = tc.origin.ConflictResolution
				o.ClusterScoped = tc.origin.ClusterScoped
				if tc.origin.BindingName != "" {
					o.BindingName, o.BindingID = tc.origin.BindingName, tc.origin.BindingID
				}
			}
			before := tmpl.DeepCopy()
			m, _, err := Render(tmpl, workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}, tc.revise, o, overrides.None)
			if err != nil {
				t.Fatal(err)
			}
			if r, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas"); r != tc.wantReplicas {
				t.Errorf("spec.replicas = %d, want %d", r, tc.wantReplicas)
			}
			for _, hubOnly := range [][]string{
				{"metadata", "uid"}, {"metadata", "resourceVersion"}, {"metadata", "generation"},
				{"metadata", "creationTimestamp"}, {"metadata", "managedFields"}, {"metadata", "ownerReferences"}, {"status"},
			} {
				if _, found, _ := unstructured.NestedFieldNoCopy(m.Object, hubOnly...); found {
					t.Errorf("%v is hub-only and must not reach members", hubOnly)
				}
			}
			if _, found := m.GetAnnotations()["deployment.kubernetes.io/revision"]; found {
				t.Error("the Deployment revision annotation is hub-only")
			}
			if _, found := m.GetAnnotations()[workv1alpha2.ResourceTemplateGenerationAnnotationKey]; found {
				t.Error("the template generation must not be stamped: it rewrites unchanged members on resume")
			}
			if got := m.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation]; got != tc.wantConflict {
				t.Errorf("conflict resolution = %q, want %q", got, tc.wantConflict)
			}
			if got := m.GetLabels()[tc.wantLabel[0]]; got != tc.wantLabel[1] {
				t.Errorf("label %s = %q, want %q", tc.wantLabel[0], got, tc.wantLabel[1])
			}
			if tc.wantAnno[0] != "" {
				if got := m.GetAnnotations()[tc.wantAnno[0]]; got != tc.wantAnno[1] {
					t.Errorf("annotation %s = %q, want %q", tc.wantAnno[0], got, tc.wantAnno[1])
				}
			}
			if !equalObjects(before, tmpl) {
				t.Error("Manifest changed the template it was given")
			}
		})
	}
}

func equalObjects(a, b *unstructured.Unstructured) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
}

// Suspending, resuming or gating a template must not rewrite member
// objects: the suspension and gate annotations stay on the hub (apis/keys),
// every other annotation travels.
func TestManifestLeavesSuspensionOnTheHub(t *testing.T) {
	tmpl := fixture.Template(t, fixture.WebDeploymentYAML)
	a := tmpl.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a["propagation.federator.dev/suspended"] = "incident 42"
	a["suspended.propagation.federator.dev/member3"] = "canary"
	a["gating.federator.dev/gates"] = "approval"
	a["rollouts.federator.dev/anything"] = "x"
	a["team.example.com/owner"] = "checkout"
	tmpl.SetAnnotations(a)
	m, _, err := Render(tmpl, workv1alpha2.TargetCluster{Name: "member1"}, false, Origin{WorkNamespace: "karmada-es-member1", WorkName: "w"}, overrides.None)
	if err != nil {
		t.Fatal(err)
	}
	got := m.GetAnnotations()
	for _, k := range []string{"propagation.federator.dev/suspended", "suspended.propagation.federator.dev/member3",
		"gating.federator.dev/gates", "rollouts.federator.dev/anything"} {
		if _, ok := got[k]; ok {
			t.Errorf("member manifest carries %s", k)
		}
	}
	if got["team.example.com/owner"] != "checkout" {
		t.Errorf("a user's annotation was dropped: %v", got)
	}
	if tmpl.GetAnnotations()["propagation.federator.dev/suspended"] != "incident 42" {
		t.Error("Manifest changed the template")
	}
}

// A Pull cluster's manifest carries the template's generation, as Karmada's
// binding controller stamps it: Karmada's karmada-agent reflects no status
// of a Deployment without it, and a Rollout reads it back to tell that the
// member runs this manifest. A Push cluster's does not.
func TestManifestStampsTheGenerationForPullClusters(t *testing.T) {
	tmpl := fixture.Template(t, fixture.WebDeploymentYAML)
	tmpl.SetGeneration(7)
	for _, pull := range []bool{false, true} {
		m, _, err := Render(tmpl, workv1alpha2.TargetCluster{Name: "member1"}, false,
			Origin{WorkNamespace: "karmada-es-member1", WorkName: "w", Pull: pull}, overrides.None)
		if err != nil {
			t.Fatal(err)
		}
		got, stamped := m.GetAnnotations()[workv1alpha2.ResourceTemplateGenerationAnnotationKey]
		switch {
		case pull && got != "7":
			t.Errorf("Pull cluster: %s = %q, want \"7\"", workv1alpha2.ResourceTemplateGenerationAnnotationKey, got)
		case !pull && stamped:
			t.Errorf("Push cluster: %s stamped (%q)", workv1alpha2.ResourceTemplateGenerationAnnotationKey, got)
		}
	}
}
