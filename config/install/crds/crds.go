// Package crds owns the CustomResourceDefinition manifests the hub serves:
// Karmada's policy, work, cluster and config (resource interpreter) APIs,
// generated from Karmada's Go types, and
// federator's gating (Gate, Freeze) and rollouts APIs, generated from
// apis/gating and apis/rollouts, by
// hack/gen-crds.sh (`make manifests`) and embedded here so the binary that
// starts a hub installs exactly the schemas it was built against.
//
// The files are also part of config/install's kustomization: this
// directory's kustomization.yaml lists every one (config/install's test
// checks it; `make kustomizations` rewrites it) and is not a CRD.
package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var manifests embed.FS

// kustomizationFile lists the CRD files for kustomize; it is no CRD.
const kustomizationFile = "kustomization.yaml"

// CRDs decodes the embedded manifests, one CRD per file, sorted by name.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(manifests, "*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, file := range files {
		if file == kustomizationFile {
			continue
		}
		data, err := manifests.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		// Strict, so a manifest from a newer controller-gen with fields this
		// apiextensions version does not know fails here, not half-applied.
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", file, err)
		}
		if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
			return nil, fmt.Errorf("decoding %s: not a named CustomResourceDefinition (kind %q)", file, crd.Kind)
		}
		crds = append(crds, crd)
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds, nil
}
