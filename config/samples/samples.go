// Package samples owns the example objects `federator up --sample` applies:
// a staged rollout a newcomer can watch.
package samples

import _ "embed"

// Rollout is a Namespace, a Deployment and a PropagationPolicy that sends
// it to every member; the printed steps of `up --sample` stage a new image.
//
//go:embed rollout.yaml
var Rollout []byte
