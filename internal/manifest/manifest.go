// Package manifest owns what a member receives for a template: the object
// the binding controller writes into a cluster's Work (pkg/binding), and
// what `federator get rollout` compares a Work with to say whether it
// carries the template as it is now.
package manifest

import (
	"fmt"
	"strconv"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/resourceinterpreter/default/native/prune"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/federator-dev/federator/apis/keys"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/overrides"
)

// Origin identifies the binding and Work a member manifest comes from; it
// becomes the labels and annotations Karmada puts on member objects.
type Origin struct {
	// Cluster scope: the binding is a ClusterResourceBinding.
	ClusterScoped      bool
	BindingNamespace   string
	BindingName        string
	BindingID          string // the binding's permanent-id label
	WorkNamespace      string
	WorkName           string
	ConflictResolution policyv1alpha1.ConflictResolution
	// Pull: the Work is a Pull cluster's, applied by its agent, which may
	// be Karmada's karmada-agent.
	Pull bool
}

// Render returns the object to write into one member cluster for template,
// and the Work annotations that record the overrides applied to it: the
// template with the cluster's share of replicas when the binding divides
// them, then the cluster's overrides (last, as in Karmada: they have the
// highest priority), without the fields only the hub has (Karmada's prune),
// and with the identifying labels and annotations Karmada sets. Nothing in
// it changes unless the template, the placement, an override or the binding
// does: in particular the template's generation is not stamped (but for a
// Pull cluster, whose agent may be Karmada's), so resuming a suspended
// cluster does not rewrite objects whose content did not change.
func Render(template *unstructured.Unstructured, target workv1alpha2.TargetCluster, reviseReplicas bool, o Origin,
	override overrides.Func) (*unstructured.Unstructured, map[string]string, error) {
	m := template.DeepCopy()
	uid := string(template.GetUID())
	if reviseReplicas {
		if _, found, _ := unstructured.NestedFieldNoCopy(m.Object, "spec", "replicas"); found {
			if err := unstructured.SetNestedField(m.Object, int64(target.Replicas), "spec", "replicas"); err != nil {
				return nil, nil, fmt.Errorf("set spec.replicas of %s %s: %w", template.GetKind(), toolscache.MetaObjectToName(template).String(), err)
			}
		}
	}
	applied, err := override(m, target.Name)
	if err != nil {
		return nil, nil, err
	}
	if err := prune.RemoveIrrelevantFields(m, prune.RemoveJobTTLSeconds); err != nil {
		return nil, nil, fmt.Errorf("prune %s %s: %w", template.GetKind(), toolscache.MetaObjectToName(template).String(), err)
	}

	labels := m.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[workkeys.ManagedLabel] = workkeys.ManagedLabelValue
	annotations := m.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	// What holds a template is the hub's business: members do not get the
	// keys apis/keys' table keeps on the hub (the suspension annotations,
	// the gates), so suspending, resuming or gating a template rewrites no
	// member object, held or not.
	for k := range annotations {
		if !keys.ToMembers(k) {
			delete(annotations, k)
		}
	}
	if o.ClusterScoped {
		labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] = o.BindingID
		annotations[workv1alpha2.ClusterResourceBindingAnnotationKey] = o.BindingName
	} else {
		labels[workv1alpha2.ResourceBindingPermanentIDLabel] = o.BindingID
		annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] = o.BindingNamespace
		annotations[workv1alpha2.ResourceBindingNameAnnotationKey] = o.BindingName
	}
	annotations[workv1alpha2.ResourceTemplateUIDAnnotation] = uid
	annotations[workv1alpha2.WorkNamespaceAnnotation] = o.WorkNamespace
	annotations[workv1alpha2.WorkNameAnnotation] = o.WorkName
	// Read after the overrides, as Karmada's mergeConflictResolution reads
	// the overridden workload.
	annotations[workv1alpha2.ResourceConflictResolutionAnnotation] = conflictResolution(m, o.ConflictResolution)
	if o.Pull {
		// Karmada's agent reflects a member's status with the template
		// generation its copy carries, and reflects none for a workload
		// without one; its Applied condition records no generation, so
		// this is also what tells a Rollout the member runs this manifest
		// (pkg/rollout). Stamped for Pull clusters alone: a Push member's
		// dispatcher needs no stamp, and an unchanged object is not
		// rewritten there on resume.
		annotations[workv1alpha2.ResourceTemplateGenerationAnnotationKey] = strconv.FormatInt(template.GetGeneration(), 10)
	}
	m.SetLabels(labels)
	m.SetAnnotations(annotations)
	return m, applied, nil
}

// conflictResolution follows Karmada's mergeConflictResolution: a valid
// annotation on the workload wins, then the policy's Overwrite, else Abort.
func conflictResolution(workload *unstructured.Unstructured, fromPolicy policyv1alpha1.ConflictResolution) string {
	switch workload.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation] {
	case workv1alpha2.ResourceConflictResolutionOverwrite:
		return workv1alpha2.ResourceConflictResolutionOverwrite
	case workv1alpha2.ResourceConflictResolutionAbort:
		return workv1alpha2.ResourceConflictResolutionAbort
	}
	if fromPolicy == policyv1alpha1.ConflictOverwrite {
		return workv1alpha2.ResourceConflictResolutionOverwrite
	}
	return workv1alpha2.ResourceConflictResolutionAbort
}
