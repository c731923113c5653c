package v1alpha1

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// ResolveCount is what a count field (maxConcurrency, maxFailures) comes
// to out of total clusters; false when unset or invalid (not a whole
// number, or "<whole number>%", or negative). A number written as a
// string ("2") is that number, as it reads. Percentages round up when
// roundUp (concurrency: never stall at 0) and down otherwise (failures:
// never allow more than asked).
func ResolveCount(v *intstr.IntOrString, total int, roundUp bool) (int, bool) {
	if v == nil {
		return 0, false
	}
	if v.Type == intstr.Int {
		return int(v.IntVal), v.IntVal >= 0
	}
	pct, isPct := strings.CutSuffix(strings.TrimSpace(v.StrVal), "%")
	n, err := strconv.Atoi(pct)
	if err != nil || n < 0 {
		return 0, false
	}
	if !isPct {
		return n, true
	}
	if roundUp {
		return (n*total + 99) / 100, true
	}
	return n * total / 100, true
}
