// Package admission owns the admission policies the hub enforces on
// federator's and Karmada's kinds (ValidatingAdmissionPolicies, so no
// webhook server is needed).
package admission

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed *.yaml
var files embed.FS

// Objects returns the admission objects to apply on the hub.
func Objects() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err == io.EOF {
				return nil
			} else if err != nil {
				return fmt.Errorf("config/admission/%s: %w", path, err)
			}
			if len(u.Object) > 0 {
				out = append(out, u)
			}
		}
	})
	return out, err
}
