package kindfleet

import (
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/federator-dev/federator/pkg/fleet"
)

const (
	// DefaultKindImage is the node image kind v0.30.0 uses unless told
	// otherwise (Kubernetes v1.34.0); it is pulled from Docker Hub.
	DefaultKindImage = defaults.Image
	// LocalNodeImage is the name of a node image built here without a
	// registry (Kubernetes v1.34.1, issue 16's offline build); it is
	// preferred when present.
	LocalNodeImage = "federator/kind-node:v1.34.1"
	// DefaultPrefix starts every cluster name: federator-hub,
	// federator-member1, ... Fleets with different prefixes coexist.
	DefaultPrefix = "federator"

	// apiServerAddress is where each node's API server port is published on
	// the host: the controllers run on the host and reach every cluster
	// there, on a port kind picks.
	apiServerAddress = "127.0.0.1"
)

// ChooseNodeImage is the node image a fleet uses: the one asked for, else
// LocalNodeImage when it is present locally, else kind's
// default.
func ChooseNodeImage(asked string, localImagePresent bool) string {
	switch {
	case asked != "":
		return asked
	case localImagePresent:
		return LocalNodeImage
	default:
		return DefaultKindImage
	}
}

// prefixPattern keeps cluster names valid for kind (its node containers
// are named <cluster>-control-plane and its names are DNS labels).
var prefixPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// maxPrefix leaves room for "-member999-control-plane" within a DNS label.
const maxPrefix = 63 - len("-member999-control-plane")

// ValidatePrefix says what is wrong with a cluster-name prefix, if anything.
func ValidatePrefix(prefix string) error {
	if !prefixPattern.MatchString(prefix) {
		return fmt.Errorf("kind cluster prefix %q: use lowercase letters, digits and '-', starting and ending with a letter or digit", prefix)
	}
	if len(prefix) > maxPrefix {
		return fmt.Errorf("kind cluster prefix %q is %d characters; at most %d leave room for the cluster names", prefix, len(prefix), maxPrefix)
	}
	return nil
}

// ClusterName is the kind cluster of a fleet's cluster: federator-hub,
// federator-member1, ...
func ClusterName(prefix, fleetName string) string { return prefix + "-" + fleetName }

// FleetNames are the fleet's clusters in the order they are created: the
// hub, then member1..members.
func FleetNames(members int) []string {
	names := []string{fleet.HubName}
	for i := 1; i <= members; i++ {
		names = append(names, fleet.MemberName(i))
	}
	return names
}

// ClusterConfig is the kind configuration of one fleet cluster: a single
// control-plane node whose API server is published on the host at
// 127.0.0.1 (a port kind picks), so the controllers, which run on the
// host, reach every member. The hub's kube-controller-manager runs only
// fleet.HubControllers, like Karmada's control plane, so a Deployment there
// stays a template; members are ordinary clusters.
func ClusterConfig(prefix, fleetName, nodeImage string) *v1alpha4.Cluster {
	c := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:     ClusterName(prefix, fleetName),
		Nodes: []v1alpha4.Node{{
			Role:   v1alpha4.ControlPlaneRole,
			Image:  nodeImage,
			Labels: map[string]string{"federator.dev/fleet-cluster": fleetName},
		}},
		Networking: v1alpha4.Networking{APIServerAddress: apiServerAddress},
	}
	if fleetName == fleet.HubName {
		c.KubeadmConfigPatches = []string{hubControllerManagerPatch()}
	}
	return c
}

// hubControllerManagerPatch is a kubeadm ClusterConfiguration merge patch
// limiting kube-controller-manager to fleet.HubControllers. kind v0.30
// writes kubeadm's v1beta3 configuration, whose extraArgs is a map, so the
// patch adds one key and keeps kind's own. kind matches a patch without
// apiVersion by kind alone.
func hubControllerManagerPatch() string {
	return fmt.Sprintf(`kind: ClusterConfiguration
controllerManager:
  extraArgs:
    controllers: %q
`, strings.Join(fleet.HubControllers, ","))
}
