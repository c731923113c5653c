// Package samples owns the example objects `federator up --sample` applies:
// a staged rollout a newcomer can watch.
package samples

import _ "embed"

// Rollout is a Namespace, a Deployment and a PropagationPolicy that sends
// it to member1 while member2 and member3 are suspended.
//
//go:embed rollout.yaml
var Rollout []byte
