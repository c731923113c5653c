package revision

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// The rendered content of each revision is kept on the hub as a
// ControllerRevision (the object Kubernetes keeps a StatefulSet's or a
// DaemonSet's history in), so Rollback and `federator rollout undo` put back
// exactly what ran.

// Content is a ControllerRevision's data: every claimed template of one
// revision.
type Content struct {
	Templates []Template `json:"templates"`
}

// Template is one template as it was at a revision, and what each cluster
// it was placed on got of it.
type Template struct {
	// Binding is the binding's key: "namespace/name" of a ResourceBinding,
	// "name" of a ClusterResourceBinding.
	Binding string `json:"binding"`
	Hash    string `json:"hash"`
	// Object is the template without its status.
	Object map[string]any `json:"object"`
	// Clusters are the clusters it was placed on, sorted, with what each
	// got. Revisions kept before this field have none.
	Clusters []Rendered `json:"clusters,omitempty"`
}

// Rendered is what one cluster got of a template at a revision.
type Rendered struct {
	Cluster string `json:"cluster"`
	// Hash is the content hash of what it got: the template's own when
	// no override applied.
	Hash string `json:"hash"`
	// Object is the template with the cluster's overrides applied,
	// without its status; absent when it is the template itself.
	Object map[string]any `json:"object,omitempty"`
	// Applied are the Work annotations that recorded the overrides.
	Applied map[string]string `json:"applied,omitempty"`
}

// NewTemplate is how a revision keeps one claimed template.
func NewTemplate(cl Claimed) Template {
	t := Template{Binding: BindingKey(cl.Binding), Hash: cl.Hash, Object: Kept(cl.Template)}
	for _, c := range slices.Sorted(maps.Keys(cl.Clusters)) {
		r := cl.Clusters[c]
		if r.Err != nil {
			// What it gets cannot be built now: nothing to keep, and no
			// change to stage (Changed); it keeps its last manifest.
			continue
		}
		kept := Rendered{Cluster: c, Hash: r.Hash, Applied: r.Applied}
		if r.Hash != cl.Hash {
			kept.Object = Kept(r.Object)
		}
		t.Clusters = append(t.Clusters, kept)
	}
	return t
}

// For is the content hash of what cluster got; ok is false when the
// revision did not keep it per cluster.
func (t *Template) For(cluster string) (string, bool) {
	for _, r := range t.Clusters {
		if r.Cluster == cluster {
			return r.Hash, true
		}
	}
	return "", false
}

// RenderedFor is what cluster got, to be sent again as it was: the
// object, its hash, the overrides it recorded, and rendered, true when the
// overrides are in the object already (false: the revision kept no render
// for the cluster; the template is to be rendered with today's overrides).
func (t *Template) RenderedFor(cluster string) (obj *unstructured.Unstructured, hash string, applied map[string]string, rendered bool) {
	for _, r := range t.Clusters {
		if r.Cluster != cluster {
			continue
		}
		if r.Object != nil {
			return &unstructured.Unstructured{Object: r.Object}, r.Hash, r.Applied, true
		}
		return &unstructured.Unstructured{Object: t.Object}, r.Hash, r.Applied, true
	}
	return &unstructured.Unstructured{Object: t.Object}, t.Hash, nil, false
}

// HistoryKey is where the ControllerRevision of a Rollout's revision is
// kept: in the Rollout's namespace, or in federator-system for a
// ClusterRollout.
func (r Rollout) HistoryKey(rev int64) client.ObjectKey {
	if ns := r.Obj.GetNamespace(); ns != "" {
		return client.ObjectKey{Namespace: ns, Name: r.Obj.GetName() + "-" + strconv.FormatInt(rev, 10)}
	}
	return client.ObjectKey{Namespace: rolloutsv1alpha1.HistoryNamespace,
		Name: "clusterrollout-" + r.Obj.GetName() + "-" + strconv.FormatInt(rev, 10)}
}

// Kept is the template as it is kept in history: without its status and
// the fields the API server keeps.
func Kept(tpl *unstructured.Unstructured) map[string]any {
	m := tpl.DeepCopy()
	delete(m.Object, "status")
	unstructured.RemoveNestedField(m.Object, "metadata", "managedFields")
	return m.Object
}

// NewHistory is the ControllerRevision that keeps content as revision rev
// of the Rollout.
func NewHistory(r Rollout, rev int64, content Content) (*appsv1.ControllerRevision, error) {
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	key := r.HistoryKey(rev)
	cr := &appsv1.ControllerRevision{Revision: rev, Data: runtime.RawExtension{Raw: raw}}
	cr.Namespace, cr.Name = key.Namespace, key.Name
	cr.Labels = map[string]string{rolloutsv1alpha1.RolloutUIDLabel: string(r.UID())}
	return cr, nil
}

// Read is what cr keeps.
func Read(cr *appsv1.ControllerRevision) (Content, error) {
	var content Content
	if err := json.Unmarshal(cr.Data.Raw, &content); err != nil {
		return Content{}, fmt.Errorf("read ControllerRevision %s/%s: %w", cr.Namespace, cr.Name, err)
	}
	return content, nil
}

// FromHistory is binding's template as cr kept it; ok is false when the
// revision did not hold it.
func FromHistory(cr *appsv1.ControllerRevision, binding string) (*Template, bool, error) {
	kept, err := Templates(cr)
	if err != nil {
		return nil, false, err
	}
	t, ok := kept[binding]
	return t, ok, nil
}

// Templates are the templates cr keeps, by binding key.
func Templates(cr *appsv1.ControllerRevision) (map[string]*Template, error) {
	content, err := Read(cr)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Template, len(content.Templates))
	for i := range content.Templates {
		out[content.Templates[i].Binding] = &content.Templates[i]
	}
	return out, nil
}

// Hashes are the content hashes cr keeps, by binding key.
func Hashes(cr *appsv1.ControllerRevision) (map[string]string, error) {
	content, err := Read(cr)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(content.Templates))
	for _, t := range content.Templates {
		out[t.Binding] = t.Hash
	}
	return out, nil
}

// BindingKey is the key of a binding in Content.
func BindingKey(b client.Object) string {
	if b.GetNamespace() == "" {
		return b.GetName()
	}
	return b.GetNamespace() + "/" + b.GetName()
}
