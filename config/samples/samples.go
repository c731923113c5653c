// Package samples owns the example objects `federator up --sample` applies:
// a staged rollout a newcomer can watch.
package samples

import _ "embed"

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
