package samples

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federator-dev/federator/pkg/yamldocs"
)

// webReadiness is the workload image's readiness probe (hack/workload-image):
// its server listens on 8080 and answers /readyz 503 when its tag ends in
// -broken.
var webReadiness = map[string]any{
	"httpGet":       map[string]any{"path": "/readyz", "port": int64(8080)},
	"periodSeconds": int64(2),
}

// ForRealContainers rewrites the Deployments of sample (YAML documents) to
// run repository (the workload image, federator/web) at the tag of their
// nginx image, with a readiness probe on its /readyz, which its -broken tags
// fail: so where nodes run pods for real, a broken version fails because its
// pods never become ready, and a good one becomes ready. It returns the
// documents as a stream of JSON objects (which yamldocs reads).
func ForRealContainers(sample []byte, repository string) ([]byte, error) {
	objs, err := yamldocs.Decode(sample)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, u := range objs {
		if u.GetKind() == "Deployment" {
			containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			if err != nil {
				return nil, fmt.Errorf("sample Deployment %s: %w", u.GetName(), err)
			}
			for _, c := range containers {
				c := c.(map[string]any)
				image, _ := c["image"].(string)
				repo, tag, _ := strings.Cut(image, ":")
				if repo != "nginx" {
					return nil, fmt.Errorf("sample Deployment %s: container image %q is not nginx:TAG", u.GetName(), image)
				}
				c["image"] = repository + ":" + tag
				c["readinessProbe"] = webReadiness
			}
			if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
				return nil, err
			}
		}
		raw, err := json.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		out = append(append(out, raw...), '\n')
	}
	return out, nil
}
