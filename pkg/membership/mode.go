package membership

import (
	"fmt"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
)

// ModeError is a cluster asked to be served in the mode it is not
// registered in: an agent (federator's, or a Pull registration for one)
// for a cluster the hub dispatches to, or a Push registration of a cluster
// an agent serves. Either way one member would have two writers, so it is
// refused, and nothing is changed. It is the one wording of that refusal,
// whichever of join, the agent or `federator up` meets it.
type ModeError struct {
	Cluster string
	// Registered is the mode its Cluster has; the other was asked for.
	Registered clusterv1alpha1.ClusterSyncMode
}

func (e *ModeError) Error() string {
	if e.Registered == clusterv1alpha1.Pull {
		return fmt.Sprintf("cluster %s is registered in Pull mode (spec.syncMode: Pull): its agent serves it, and the hub would "+
			"be a second writer. Unregister it first (federator unjoin %s) to register it in Push mode", e.Cluster, e.Cluster)
	}
	return fmt.Sprintf("cluster %s is registered in Push mode (spec.syncMode: Push): the hub dispatches to it, and an agent "+
		"would be a second writer. Unregister it first (federator unjoin %s), or change its spec.syncMode to Pull "+
		"(kubectl patch cluster %s --type merge -p '{\"spec\":{\"syncMode\":\"Pull\"}}'), then try again",
		e.Cluster, e.Cluster, e.Cluster)
}
