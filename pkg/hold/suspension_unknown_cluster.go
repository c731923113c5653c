package hold

import (
	"fmt"
	"strings"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// unknownClusterAnnotationCheck: an annotation
// suspended.propagation.federator.dev/<cluster> on the template or its
// policy naming a cluster that is not registered is most likely a typo of
// the cluster meant, which would otherwise go unsuspended; every cluster is
// held until the annotation is fixed or removed, or such a cluster joins
// (fail safe, as unknownSuspendedClusterCheck for spec.suspension lists).
var unknownClusterAnnotationCheck = Check{Name: "UnknownSuspendedClusterAnnotation", Holds: func(in Input, _ string) (Hold, bool) {
	if in.KnownClusters == nil {
		return Hold{}, false
	}
	var problems []string
	for _, o := range []Object{in.Template, in.Policy} {
		if o.Kind == "" {
			continue
		}
		if unknown := UnknownAnnotatedClusters(o.Annotations, in.KnownClusters); len(unknown) > 0 {
			problems = append(problems, fmt.Sprintf("annotation %s on %s names %s, which is no registered Cluster",
				strings.Join(suspendedKeys(unknown), ", "), o, QuotedNames(unknown)))
		}
	}
	if len(problems) == 0 {
		return Hold{}, false
	}
	return Hold{Reason: workkeys.ReasonSuspendDispatching,
		Message: strings.Join(problems, "; ") + "; every cluster is held until the annotation names a registered Cluster " +
			"or is removed (`federator resume --clusters NAME`), or such a cluster joins"}, true
}}
