package localfleet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/federator-dev/federator/pkg/yamldocs"
)

// hubCRDs is what `federator up --hub-crds DIR` starts the hub with: every
// CustomResourceDefinition in DIR's YAML files (Karmada's own, say, so the
// fleet starts as a Karmada hub moving over does), plus federator's own
// for the names DIR lacks. The controllers then start on that hub as they
// would on any other: CRDs already there are the hub's, not theirs.
func hubCRDs(dir string, own []*apiextensionsv1.CustomResourceDefinition) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	given, err := loadCRDs(dir)
	if err != nil {
		return nil, err
	}
	if len(given) == 0 {
		return nil, fmt.Errorf("--hub-crds %s: no CustomResourceDefinition in its .yaml/.yml/.json files; point it at a directory of CRD manifests (Karmada's are in charts/karmada/_crds/bases)", dir)
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range given {
		byName[crd.Name] = crd
	}
	out := append([]*apiextensionsv1.CustomResourceDefinition{}, given...)
	for _, crd := range own {
		if byName[crd.Name] == nil {
			out = append(out, crd)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// loadCRDs decodes every CustomResourceDefinition in the YAML or JSON files
// under dir (recursively), skipping documents of other kinds (a
// kustomization.yaml, say). A CRD named twice is refused: which one the hub
// got would depend on file order.
func loadCRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	from := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := strings.ToLower(filepath.Ext(path))
		if d.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		docs, err := yamldocs.Decode(data)
		if err != nil {
			return fmt.Errorf("--hub-crds: %s: %w", path, err)
		}
		for _, u := range docs {
			if u.GetKind() != "CustomResourceDefinition" {
				continue
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
				return fmt.Errorf("--hub-crds: %s: CustomResourceDefinition %s: %w", path, u.GetName(), err)
			}
			if crd.Name == "" || len(crd.Spec.Versions) == 0 {
				return fmt.Errorf("--hub-crds: %s: CustomResourceDefinition %q has no name or no versions (a kustomize patch?); point --hub-crds at complete CRDs only", path, crd.Name)
			}
			if first, dup := from[crd.Name]; dup {
				return fmt.Errorf("--hub-crds: CustomResourceDefinition %s is in both %s and %s; keep one", crd.Name, first, path)
			}
			from[crd.Name] = path
			out = append(out, crd)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("--hub-crds %s: %w", dir, err)
		}
		return nil, err
	}
	return out, nil
}
