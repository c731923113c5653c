package hold

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	policykeys "github.com/federator-dev/federator/apis/policy"
)

// isHoldAnnotation says whether an annotation of a template, a policy or a
// Cluster is one the checks read: the suspended annotation, a per-cluster
// suspended annotation, the gates it waits for, its deletion delay.
func isHoldAnnotation(key string) bool {
	return key == policykeys.SuspendedAnnotation || strings.HasPrefix(key, policykeys.ClusterSuspendedAnnotationPrefix) ||
		key == gatingv1alpha1.GatesAnnotation || key == policykeys.DeletionDelayAnnotation
}

// Annotations are the annotations among annotations that decide holds; nil
// when there are none.
func Annotations(annotations map[string]string) map[string]string {
	var out map[string]string
	for k, v := range annotations {
		if isHoldAnnotation(k) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// AnnotationsChanged says whether old and new differ in an annotation that
// decides holds: a change the controllers take before bulk work
// (internal/priority).
func AnnotationsChanged(old, new map[string]string) bool {
	return AnnotationsDigest(old) != AnnotationsDigest(new)
}

// AnnotationsDigest is a short digest of the annotations that decide holds
// ("" when there are none): the detector stamps a template's on its
// binding (workkeys.TemplateHoldsAnnotation), so the binding controller can
// tell a hold change from any other change of the template.
func AnnotationsDigest(annotations map[string]string) string {
	var keys []string
	for k := range annotations {
		if isHoldAnnotation(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	slices.Sort(keys)
	h := fnv.New64a()
	for _, k := range keys {
		_, _ = h.Write([]byte(k + "=" + annotations[k] + "\x00"))
	}
	return strconv.FormatUint(h.Sum64(), 36)
}
