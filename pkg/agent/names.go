package agent

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// maxClusterName is Karmada's limit on a Cluster's name (its execution
// namespace, karmada-es-<name>, must stay a valid namespace name).
const maxClusterName = 48

// validName is nil for a name a Cluster may have, else why not.
func validName(name string) error {
	if len(name) > maxClusterName {
		return fmt.Errorf("at most %d characters", maxClusterName)
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
