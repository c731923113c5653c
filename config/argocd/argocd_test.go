package argocd

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// TestKustomizeBuildsTheScripts: `kubectl apply -k config/argocd` gives
// Argo CD's argocd-cm exactly the scripts Health runs, under the keys
// Argo CD reads (bin/kubectl, `make binaries`).
func TestKustomizeBuildsTheScripts(t *testing.T) {
	kubectl, err := filepath.Abs(filepath.Join("..", "..", "bin", "kubectl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("no %s (make binaries)", kubectl)
	}
	out, err := exec.Command(kubectl, "kustomize", ".").Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/argocd: %v", err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(out, cm); err != nil {
		t.Fatalf("kubectl kustomize config/argocd: %v\n%s", err, out)
	}
	if cm.Kind != "ConfigMap" || cm.Namespace != "argocd" || cm.Name != "argocd-cm" {
		t.Fatalf("builds %s %s/%s, want ConfigMap argocd/argocd-cm", cm.Kind, cm.Namespace, cm.Name)
	}
	want, err := Scripts()
	if err != nil {
		t.Fatal(err)
	}
	for key, script := range want {
		if cm.Data[key] != script {
			t.Errorf("argocd-cm %s is not the embedded script", key)
		}
	}
	for key := range cm.Data {
		if _, ok := want[key]; !ok {
			t.Errorf("argocd-cm has %s, which Health does not run", key)
		}
	}
}

// TestHealthIsArgoCDs: what Argo CD does with what a script gives it.
func TestHealthIsArgoCDs(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gating.federator.dev/v1alpha1", "kind": "Gate",
		"metadata": map[string]any{"name": "approval", "generation": int64(2)},
	}}
	got, err := Health(u)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "Progressing" {
		t.Errorf("a gate without a status: %+v, want Progressing", got)
	}
	u.SetKind("Freeze")
	if _, err := Health(u); err == nil {
		t.Error("a kind without a health check ran one")
	}
	if Key(schema.GroupKind{Group: "gating.federator.dev", Kind: "Gate"}) != "resource.customizations.health.gating.federator.dev_Gate" {
		t.Error("argocd-cm key is not Argo CD's resource.customizations.health.<group>_<kind>")
	}
}
