package dispatch

import (
	"encoding/json"

	configv1alpha1 "github.com/karmada-io/karmada/pkg/apis/config/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reflectStatus is what the Work carries of a member object's status, as
// Karmada's work status controller collects it with the default
// interpreter: a kind's own selection (a Deployment's replica counts with
// its generation beside them, a Job's counts, conditions and times, a
// LoadBalancer Service's ingress, ...) or the whole status of other kinds;
// nil when the member has written none yet.
//
// Karmada's selection also carries the template generation it stamps on
// member objects; federator stamps none (an unchanged member object is
// never rewritten), so the hub supplies what it means from the Work's
// state when it aggregates (pkg/bindingstatus's TemplateStatus).
func reflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status"); !found {
		return nil, nil
	}
	subject := &unstructured.Unstructured{Object: make(map[string]any, len(obj.Object))}
	for k, v := range obj.Object {
		subject.Object[k] = v
	}
	// The interpreter parses the stamp; "0" reads as "not known here".
	subject.Object["metadata"] = runtime.DeepCopyJSONValue(obj.Object["metadata"])
	annotations := subject.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[workv1alpha2.ResourceTemplateGenerationAnnotationKey] = "0"
	subject.SetAnnotations(annotations)
	raw, err := interpreter.ReflectStatus(subject)
	if err != nil || raw == nil {
		return raw, err
	}
	if gvk := obj.GroupVersionKind(); gvk.Group == "apps" && gvk.Kind == "StatefulSet" {
		// Karmada's selection drops a StatefulSet's observedGeneration,
		// and its aggregation then never sees a member observe the
		// template; carry it, as Deployments and DaemonSets do.
		return withField(raw, "observedGeneration", obj, "status", "observedGeneration")
	}
	return raw, nil
}

// withField adds the value at path in obj to the JSON object raw.
func withField(raw *runtime.RawExtension, key string, obj *unstructured.Unstructured, path ...string) (*runtime.RawExtension, error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !found {
		return raw, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw.Raw, &m); err != nil {
		return nil, err
	}
	m[key] = v
	out, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &runtime.RawExtension{Raw: out}, nil
}

// health is Karmada's verdict on a member object: Healthy for kinds its
// default interpreter has no rule for, Unknown when the rule fails.
func health(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	if !interpreter.HookEnabled(obj.GroupVersionKind(), configv1alpha1.InterpreterOperationInterpretHealth) {
		return workv1alpha1.ResourceHealthy
	}
	healthy, err := interpreter.InterpretHealth(obj)
	switch {
	case err != nil:
		return workv1alpha1.ResourceUnknown
	case healthy:
		return workv1alpha1.ResourceHealthy
	}
	return workv1alpha1.ResourceUnhealthy
}

func manifestStatus(member client.Client, ordinal int, obj *unstructured.Unstructured) (workv1alpha1.ManifestStatus, bool) {
	if obj == nil {
		return workv1alpha1.ManifestStatus{}, false
	}
	gvk := obj.GroupVersionKind()
	id := workv1alpha1.ResourceIdentifier{Ordinal: ordinal, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if mapping, err := member.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		id.Resource = mapping.Resource.Resource
	}
	ms := workv1alpha1.ManifestStatus{Identifier: id, Health: health(obj)}
	// A status the interpreter cannot read is left out, as Karmada's
	// collector leaves it; the hub then aggregates the others.
	ms.Status, _ = reflectStatus(obj)
	return ms, true
}
