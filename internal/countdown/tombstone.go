package countdown

import (
	"fmt"
	"time"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// Ref names a hub object events can be sent to.
type Ref struct{ Kind, Namespace, Name string }

func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Tombstone records one running countdown: which member object, since
// when, for how long, and whom to tell. It is a ConfigMap in the member's
// execution namespace on the hub, so it outlives the template, its
// binding and its Work.
type Tombstone struct {
	Cluster                           string
	APIVersion, Kind, Namespace, Name string
	UID                               types.UID
	StartedAt                         time.Time
	// Delay is the value the member copy carried, as written.
	Delay string
	// Due is when the object is deleted, fixed when the countdown starts so
	// a --max-deletion-delay lowered later shortens only countdowns that
	// start later; zero when Delay cannot be honoured, or in a tombstone
	// stored before due times were recorded.
	Due     time.Time
	Binding Ref
	Policy  Ref
	// DeleteNow is when a forced deletion was asked; zero when not.
	DeleteNow time.Time
	// Work, when set, names the Work in the tombstone's namespace that the
	// hub keeps for this countdown (a Pull cluster's: KeepWork); UID is
	// then that Work's, and the countdown is the hub's to end, by deleting
	// the Work. Empty when the countdown runs in the member (its object
	// marked).
	Work string
	// StoredUID and StoredVersion are the UID and resourceVersion of the
	// ConfigMap this tombstone was read from or written as; empty when it
	// was never stored. Forget deletes that ConfigMap only: the same member
	// object placed back and deleted again records its next countdown
	// under the same name, and that record is not an ended countdown's to
	// delete.
	StoredUID     types.UID
	StoredVersion string
}

// Object names the member object as a person reads it:
// "Deployment demo/web".
func (t Tombstone) Object() string {
	return Ref{t.Kind, t.Namespace, t.Name}.String()
}

// DueAt is when the object is deleted; false when the delay cannot be
// honoured (the object is kept until forced or placed again). The due time
// recorded at the start is kept whatever max is now; max caps only a
// tombstone that records none.
func (t Tombstone) DueAt(max time.Duration) (time.Time, bool) {
	if !t.Due.IsZero() {
		return t.Due, true
	}
	d, err := Parse(t.Delay)
	if err != nil {
		return time.Time{}, false
	}
	d, _ = Capped(d, max)
	return t.StartedAt.Add(d), true
}

// TombstoneName is the name of the tombstone of a member object; one per
// object and cluster, as Karmada names Works.
func TombstoneName(kind, namespace, name string) string {
	return "deletion-" + names.GenerateWorkName(kind, name, namespace)
}

// NewTombstone is the record of the countdown of obj, the member copy of
// manifest in cluster, started at startedAt. The delay, binding and policy
// are the manifest's: the hub's latest word, which a held member copy may
// not carry yet. Its due time is fixed now, from the delay the manifest
// carries (already capped by the binding controller at
// --max-deletion-delay).
func NewTombstone(cluster string, manifest, obj *unstructured.Unstructured, startedAt time.Time) Tombstone {
	a := manifest.GetAnnotations()
	t := Tombstone{Cluster: cluster, APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(),
		Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(), StartedAt: startedAt,
		Delay: a[policykeys.DeletionDelayAnnotation]}
	t.Due, _ = t.DueAt(0)
	if name := a[workv1alpha2.ClusterResourceBindingAnnotationKey]; name != "" {
		t.Binding = Ref{"ClusterResourceBinding", "", name}
	} else if name := a[workv1alpha2.ResourceBindingNameAnnotationKey]; name != "" {
		t.Binding = Ref{"ResourceBinding", a[workv1alpha2.ResourceBindingNamespaceAnnotationKey], name}
	}
	if kind, ns, name := workkeys.ClaimingPolicy(a); kind != "" {
		t.Policy = Ref{kind, ns, name}
	}
	return t
}

// ConfigMap is the tombstone as stored.
func (t Tombstone) ConfigMap() *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: names.GenerateExecutionSpaceName(t.Cluster),
			Name: TombstoneName(t.Kind, t.Namespace, t.Name), Labels: map[string]string{workkeys.TombstoneLabel: "true"}},
		Data: map[string]string{
			"cluster": t.Cluster, "apiVersion": t.APIVersion, "kind": t.Kind, "namespace": t.Namespace, "name": t.Name,
			"uid": string(t.UID), "startedAt": t.StartedAt.UTC().Format(time.RFC3339), "delay": t.Delay,
			"bindingKind": t.Binding.Kind, "bindingNamespace": t.Binding.Namespace, "bindingName": t.Binding.Name,
			"policyKind": t.Policy.Kind, "policyNamespace": t.Policy.Namespace, "policyName": t.Policy.Name,
		},
	}
	if t.Work != "" {
		cm.Data["work"] = t.Work
	}
	if !t.Due.IsZero() {
		cm.Data["dueAt"] = t.Due.UTC().Format(time.RFC3339)
	}
	if !t.DeleteNow.IsZero() {
		cm.Annotations = map[string]string{workkeys.DeleteNowAnnotation: t.DeleteNow.UTC().Format(time.RFC3339)}
	}
	return cm
}

// FromConfigMap reads a stored tombstone.
func FromConfigMap(cm *corev1.ConfigMap) (Tombstone, error) {
	d := cm.Data
	started, err := time.Parse(time.RFC3339, d["startedAt"])
	if err != nil {
		return Tombstone{}, fmt.Errorf("tombstone %s/%s: startedAt: %w", cm.Namespace, cm.Name, err)
	}
	if d["kind"] == "" || d["name"] == "" || d["apiVersion"] == "" || d["cluster"] == "" {
		return Tombstone{}, fmt.Errorf("tombstone %s/%s: cluster, apiVersion, kind and name are required", cm.Namespace, cm.Name)
	}
	t := Tombstone{Cluster: d["cluster"], APIVersion: d["apiVersion"], Kind: d["kind"], Namespace: d["namespace"],
		Name: d["name"], UID: types.UID(d["uid"]), StartedAt: started, Delay: d["delay"],
		Binding:       Ref{d["bindingKind"], d["bindingNamespace"], d["bindingName"]},
		Policy:        Ref{d["policyKind"], d["policyNamespace"], d["policyName"]},
		Work:          d["work"],
		StoredUID:     cm.UID,
		StoredVersion: cm.ResourceVersion}
	if v, ok := d["dueAt"]; ok {
		// An unreadable due time is not trusted: the delay, capped, is.
		t.Due, _ = time.Parse(time.RFC3339, v)
	}
	if v, ok := cm.Annotations[workkeys.DeleteNowAnnotation]; ok {
		// An unreadable request still asks for a deletion now.
		t.DeleteNow, err = time.Parse(time.RFC3339, v)
		if err != nil {
			t.DeleteNow = time.Unix(0, 0)
		}
	}
	return t, nil
}
