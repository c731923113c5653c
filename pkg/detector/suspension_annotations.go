package detector

import (
	"maps"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// clusterAnnotationsChanged passes a policy update that adds, removes or
// renames a suspended.propagation.federator.dev/<cluster> annotation: the
// names it lists are checked like the spec's (ClustersKnown), though an
// annotation rolls no generation.
var clusterAnnotationsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !maps.Equal(clusterAnnotationKeys(e.ObjectOld.GetAnnotations()), clusterAnnotationKeys(e.ObjectNew.GetAnnotations()))
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func clusterAnnotationKeys(annotations map[string]string) map[string]bool {
	keys := map[string]bool{}
	for k := range annotations {
		if strings.HasPrefix(k, policykeys.ClusterSuspendedAnnotationPrefix) {
			keys[k] = true
		}
	}
	return keys
}
