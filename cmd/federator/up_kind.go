package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federator-dev/federator/config/samples"
	"github.com/federator-dev/federator/pkg/kindfleet"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

// sampleRollout is the sample's Namespace, Deployment and policy. Where
// kind nodes run them for real (kindWorkloads), the Deployment runs
// kindfleet.WebRepository at the same tag, with a readiness probe on the
// server's /readyz, which its -broken tags fail: so a broken version fails
// because its pods never become ready, as in the local fleet's simulated
// nodes, and a good one becomes ready.
func (o upOptions) sampleRollout() []byte {
	if !(o.provider == providerKind && o.kindWorkloads) {
		return samples.Rollout
	}
	out, err := forRealContainers(samples.Rollout)
	if err != nil {
		panic(fmt.Sprintf("the embedded sample: %v", err)) // a test covers it
	}
	return out
}

// webReadiness is the workload image's readiness probe: its server listens
// on 8080 and answers /readyz 503 when its tag ends in -broken.
var webReadiness = map[string]any{
	"httpGet":       map[string]any{"path": "/readyz", "port": int64(8080)},
	"periodSeconds": int64(2),
}

// forRealContainers rewrites the Deployments of sample (YAML documents) to
// run kindfleet.WebRepository instead of nginx, with webReadiness, and
// returns the documents as a stream of JSON objects (which yamldocs reads).
func forRealContainers(sample []byte) ([]byte, error) {
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
				c["image"] = kindfleet.WebRepository + ":" + tag
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
