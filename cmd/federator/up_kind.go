package main

import (
	"fmt"

	"github.com/federator-dev/federator/config/samples"
	"github.com/federator-dev/federator/pkg/kindfleet"
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
	out, err := samples.ForRealContainers(samples.Rollout, kindfleet.WebRepository)
	if err != nil {
		panic(fmt.Sprintf("the embedded sample: %v", err)) // a test covers it
	}
	return out
}
