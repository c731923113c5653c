// Package samples owns the example objects `federator up --sample` applies:
// a staged rollout a newcomer can watch.
package samples

import (
	_ "embed"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Rollout is a Namespace, a Deployment and a PropagationPolicy that sends
// it to every member; the printed steps of `up --sample` stage a new image.
//
//go:embed rollout.yaml
var Rollout []byte

// Stages is the Rollout of the sample: canary (member1, soaking 30s), then
// every other member; a version not healthy within a minute is rolled
// back on the canary. Applied when members run workloads, where versions
// become healthy.
//
//go:embed rollout-stages.yaml
var Stages []byte

//go:embed canary-analysis.yaml
var canaryAnalysis []byte

// StagesWithAnalysis is Stages with its canary stage judged also by an
// analysis (canary-analysis.yaml: member1's error ratio of demo/web from
// the fleet's stand-in application) on the Prometheus at address: what
// `federator up --sample --prometheus` applies.
func StagesWithAnalysis(address string) ([]byte, error) {
	var rollout map[string]any
	if err := yaml.Unmarshal(Stages, &rollout); err != nil {
		return nil, fmt.Errorf("samples: rollout-stages.yaml: %w", err)
	}
	var analysis map[string]any
	if err := yaml.Unmarshal(canaryAnalysis, &analysis); err != nil {
		return nil, fmt.Errorf("samples: canary-analysis.yaml: %w", err)
	}
	provider, _ := analysis["provider"].(map[string]any)
	prometheus, _ := provider["prometheus"].(map[string]any)
	spec, _ := rollout["spec"].(map[string]any)
	stages, _ := spec["stages"].([]any)
	if prometheus == nil || len(stages) == 0 {
		return nil, fmt.Errorf("samples: canary-analysis.yaml needs provider.prometheus, rollout-stages.yaml spec.stages")
	}
	canary, _ := stages[0].(map[string]any)
	if canary == nil {
		return nil, fmt.Errorf("samples: rollout-stages.yaml: spec.stages[0] is not an object")
	}
	prometheus["address"] = address
	canary["analysis"] = analysis
	return yaml.Marshal(rollout)
}
