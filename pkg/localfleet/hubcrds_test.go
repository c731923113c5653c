package localfleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const policyCRDWithoutStatus = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: propagationpolicies.policy.karmada.io
spec:
  group: policy.karmada.io
  names: {kind: PropagationPolicy, plural: propagationpolicies}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ownCRD(name string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1",
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}}}}}
}

// --hub-crds: the directory's CRDs replace federator's of the same name
// (a Karmada policy CRD keeps having no status subresource), federator's
// others fill in, and files that hold no CRD (kustomization.yaml) are skipped.
func TestHubCRDs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policy", "policy.karmada.io_propagationpolicies.yaml"), policyCRDWithoutStatus)
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [policy/policy.karmada.io_propagationpolicies.yaml]\n")
	writeFile(t, filepath.Join(dir, "README.md"), "not yaml: [")

	got, err := hubCRDs(dir, []*apiextensionsv1.CustomResourceDefinition{
		ownCRD("propagationpolicies.policy.karmada.io"), ownCRD("clusters.cluster.karmada.io")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, crd := range got {
		names = append(names, crd.Name)
	}
	if want := "clusters.cluster.karmada.io propagationpolicies.policy.karmada.io"; strings.Join(names, " ") != want {
		t.Fatalf("hub CRDs = %v, want %s", names, want)
	}
	if sub := got[1].Spec.Versions[0].Subresources; sub != nil {
		t.Errorf("propagationpolicies: subresources %+v, want the directory's CRD as it is (none)", sub)
	}
	if got[0].Spec.Versions[0].Subresources == nil {
		t.Errorf("clusters: federator's own CRD was not kept")
	}
}

func TestHubCRDsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no CRD", map[string]string{"kustomization.yaml": "resources: []\n"}, "no CustomResourceDefinition"},
		{"a patch, not a CRD", map[string]string{"patch.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: resourcebindings.work.karmada.io}\nspec: {conversion: {strategy: Webhook}}\n"},
			"has no name or no versions"},
		{"named twice", map[string]string{"a.yaml": policyCRDWithoutStatus, "b/c.yaml": policyCRDWithoutStatus}, "is in both"},
		{"bad YAML", map[string]string{"a.yaml": "kind: [\n"}, "a.yaml"},
		{"no such directory", nil, "--hub-crds "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				writeFile(t, filepath.Join(dir, name), data)
			}
			if tc.files == nil {
				dir = filepath.Join(dir, "missing")
			}
			_, err := hubCRDs(dir, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}
