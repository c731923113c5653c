package localfleet

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

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
func (o state) sampleRollout() []byte {
	if !(o.Provider == ProviderKind && o.kindWorkloads) {
		return samples.Rollout
	}
	out, err := samples.ForRealContainers(samples.Rollout, kindfleet.WebRepository)
	if err != nil {
		panic(fmt.Sprintf("the embedded sample: %v", err)) // a test covers it
	}
	return out
}

// applySampleStages applies the sample's Rollout; with the fleet's
// Prometheus at prometheusURL (--prometheus), its canary stage is judged
// by an analysis too.
func applySampleStages(ctx context.Context, hub client.Client, prometheusURL string) error {
	rollout := samples.Stages
	if prometheusURL != "" {
		var err error
		if rollout, err = samples.StagesWithAnalysis(prometheusURL); err != nil {
			return err
		}
	}
	if err := yamldocs.Apply(ctx, hub, rollout, client.FieldOwner("federator-sample")); err != nil {
		return fmt.Errorf("apply the sample's Rollout: %w", err)
	}
	return nil
}

// staged says whether the sample comes with its Rollout: where members run
// workloads, so versions become healthy (or, tagged -broken, never do):
// in simulated nodes, or in kind nodes that have the workload images.
// Bare members, and kind members without those images, get the steps by hand.
func (o state) staged() bool {
	return o.Workloads && (o.Provider != ProviderKind || o.kindWorkloads)
}

// image is the sample's image of tag: nginx, or federator/web where kind
// nodes run it for real.
func (o state) image(tag string) string {
	if o.Provider == ProviderKind && o.kindWorkloads {
		return kindfleet.WebRepository + ":" + tag
	}
	return "nginx:" + tag
}
