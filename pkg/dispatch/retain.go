package dispatch

import (
	"fmt"

	configv1alpha1 "github.com/karmada-io/karmada/pkg/apis/config/v1alpha1"
	"github.com/karmada-io/karmada/pkg/resourceinterpreter/default/native"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
)

// interpreter is Karmada's built-in resource interpreter; federator uses its
// default retention rules (pkg/resourceinterpreter/default/native/retain.go).
var interpreter = native.NewDefaultInterpreter()

// retain keeps in desired the fields the member owns, as Karmada's default
// retention does before every update: a Job's generated selector and
// template labels, a Service's cluster IPs and node ports, a
// ServiceAccount's secrets, a PVC's volumeName, a PV's claimRef, a Pod's
// nodeName and what the kubelet sets, a Secret's service-account token, and
// a Deployment's replicas under the retain-replicas label. Without it an
// update of such an object is refused (a Job's selector is immutable) or
// undoes the member's work. Kinds without a rule are returned as they are.
func retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if observed == nil || !interpreter.HookEnabled(desired.GroupVersionKind(), configv1alpha1.InterpreterOperationRetain) {
		return desired, nil
	}
	retained, err := interpreter.Retain(desired, observed)
	if err != nil {
		return nil, fmt.Errorf("retain the member's fields of %s %s: %w", desired.GetKind(), toolscache.MetaObjectToName(desired).String(), err)
	}
	return retained, nil
}
