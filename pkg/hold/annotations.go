package hold

import (
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/federator-dev/federator/apis/keys"
)

// isHoldAnnotation says whether an annotation of a template, a policy or a
// Cluster is one the checks or the countdowns read (apis/keys' table: the
// suspended annotations, the gates it waits for, its deletion delay).
func isHoldAnnotation(key string) bool {
	return keys.DecidesHolds(key)
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
// (internal/holdqueue).
func AnnotationsChanged(old, new map[string]string) bool {
	return AnnotationsDigest(old) != AnnotationsDigest(new)
}

// AnnotationsDigest is a short digest of the annotations that decide holds
// ("" when there are none): the detector stamps a template's on its
// binding (workkeys.TemplateHoldsAnnotation), so the binding controller can
// tell a hold change from any other change of the template.
func AnnotationsDigest(annotations map[string]string) string {
	var held []string
	for k := range annotations {
		if isHoldAnnotation(k) {
			held = append(held, k)
		}
	}
	if len(held) == 0 {
		return ""
	}
	slices.Sort(held)
	h := fnv.New64a()
	for _, k := range held {
		_, _ = h.Write([]byte(k + "=" + annotations[k] + "\x00"))
	}
	return strconv.FormatUint(h.Sum64(), 36)
}
