package fleettest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// KarmadaModule is the Karmada module whose CRDs KarmadaCRDs reads: the one
// go.mod requires.
const KarmadaModule = "github.com/karmada-io/karmada"

// KarmadaCRDs are Karmada's own CustomResourceDefinitions, as a Karmada
// control plane installs them: every resource of the Karmada module's
// charts/karmada/_crds/kustomization.yaml, read from the Go module cache at
// the version go.mod requires. Its patches (conversion webhooks for the
// bindings) are left out: they need Karmada's webhook, and a hub serving
// only the stored version needs no conversion.
func KarmadaCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", KarmadaModule)
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("locating %s in the module cache (go mod download): %v: %s", KarmadaModule, err, stderr.String())
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "charts", "karmada", "_crds")
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var kustomization struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &kustomization); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, r := range kustomization.Resources {
		data, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", dir, r, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s/%s: kind %q, want CustomResourceDefinition", dir, r, crd.Kind)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}
