// Package install owns the manifests that run federator in a hub cluster
// (config/install, a kustomization): namespace, CRDs, admission policies,
// RBAC, the controller Deployment and its metrics Service. They are
// embedded so `federator install` applies exactly what `kubectl apply -k
// config/install` would. The CRDs and admission policies are the files of
// packages crds and admission (config/install/crds, config/install/admission),
// which the hub installs from.
package install

import (
	"embed"
	"fmt"
	"path"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/federator-dev/federator/pkg/yamldocs"
)

// The YAML files only: crds/ and admission/ also hold the Go packages that
// embed them for pkg/hubinstall and `federator up`.
//
//go:embed *.yaml crds/*.yaml admission/*.yaml
var manifests embed.FS

// Namespace is where the controller runs.
const Namespace = "federator-system"

// DeploymentName names the controller's Deployment; its container is
// ContainerName.
const (
	DeploymentName = "federator-controller"
	ContainerName  = "controller"
)

// ImageRepository is the image `make image` builds; the manifests name its
// :latest tag, which `make image` also writes.
const ImageRepository = "federator/federator"

// Objects are the manifests' objects in the kustomization's order
// (resources listed first are applied first: the namespace, then the CRDs),
// with the controller's image set to image when it is not empty.
func Objects(image string) ([]*unstructured.Unstructured, error) {
	objs, err := resources(".")
	if err != nil {
		return nil, err
	}
	if image == "" {
		return objs, nil
	}
	for _, o := range objs {
		if o.GetKind() != "Deployment" || o.GetName() != DeploymentName {
			continue
		}
		containers, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		if err != nil {
			return nil, err
		}
		for i := range containers {
			if c, ok := containers[i].(map[string]any); ok && c["name"] == ContainerName {
				c["image"] = image
			}
		}
		if err := unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// kustomization is the part of a kustomization.yaml these manifests use:
// plain resources, files or directories, and no transformers (the test
// checks that `kubectl kustomize` builds the same objects).
type kustomization struct {
	Resources []string `json:"resources"`
}

func resources(dir string) ([]*unstructured.Unstructured, error) {
	raw, err := manifests.ReadFile(path.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(stripKustomizationHeader(raw), &k); err != nil {
		return nil, fmt.Errorf("config/install/%s: %w", path.Join(dir, "kustomization.yaml"), err)
	}
	var out []*unstructured.Unstructured
	for _, r := range k.Resources {
		p := path.Join(dir, r)
		if info, err := manifests.Open(p); err == nil {
			stat, err := info.Stat()
			info.Close()
			if err == nil && stat.IsDir() {
				objs, err := resources(p)
				if err != nil {
					return nil, err
				}
				out = append(out, objs...)
				continue
			}
		}
		data, err := manifests.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("config/install/%s: %w", p, err)
		}
		objs, err := yamldocs.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("config/install/%s: %w", p, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// stripKustomizationHeader drops apiVersion and kind, so the strict decode
// refuses only fields this reader would ignore.
func stripKustomizationHeader(raw []byte) []byte {
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return raw
	}
	delete(m, "apiVersion")
	delete(m, "kind")
	out, err := yaml.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// YAML is objs as one YAML stream, documents separated by ---.
func YAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var out []byte
	for i, o := range objs {
		doc, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, "---\n"...)
		}
		out = append(out, doc...)
	}
	return out, nil
}
