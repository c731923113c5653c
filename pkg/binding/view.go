package binding

import (
	"context"
	"sync"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/retry"
)

// view is what the controllers need of a ResourceBinding or a
// ClusterResourceBinding, so one Reconcile serves both.
type view struct {
	obj           client.Object
	spec          *workv1alpha2.ResourceBindingSpec
	status        *workv1alpha2.ResourceBindingStatus
	clusterScoped bool
}

func newView(clusterScoped bool) view {
	if clusterScoped {
		b := &workv1alpha2.ClusterResourceBinding{}
		return view{obj: b, spec: &b.Spec, status: &b.Status, clusterScoped: true}
	}
	b := &workv1alpha2.ResourceBinding{}
	return view{obj: b, spec: &b.Spec, status: &b.Status}
}

// viewOf is the view of a stored ResourceBinding or ClusterResourceBinding;
// its spec and status are nil for any other object.
func viewOf(obj client.Object) view {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return view{obj: b, spec: &b.Spec, status: &b.Status}
	case *workv1alpha2.ClusterResourceBinding:
		return view{obj: b, spec: &b.Spec, status: &b.Status, clusterScoped: true}
	}
	return view{obj: obj}
}

// statusOf is the status of a ResourceBinding or ClusterResourceBinding.
func statusOf(obj client.Object) *workv1alpha2.ResourceBindingStatus {
	if s := viewOf(obj).status; s != nil {
		return s
	}
	return &workv1alpha2.ResourceBindingStatus{}
}

// snapshot is a deep copy of the binding as read, for PatchStatus.
func (v view) snapshot() client.Object { return v.obj.DeepCopyObject().(client.Object) }

func (v view) finalizer() string {
	if v.clusterScoped {
		return workkeys.ClusterBindingFinalizer
	}
	return workkeys.BindingFinalizer
}

func (v view) idLabel() string {
	if v.clusterScoped {
		return workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	return workv1alpha2.ResourceBindingPermanentIDLabel
}

// policyRef names the policy that claims the binding's template, from the
// annotations the detector records on the binding (Karmada's keys):
// kind, namespace and name; kind is "" when none is recorded.
func (v view) policyRef() (kind, namespace, name string) {
	return workkeys.ClaimingPolicy(v.obj.GetAnnotations())
}

// policyKey is how events name the claiming policy: "namespace/name" for a
// PropagationPolicy, "name" for a ClusterPropagationPolicy.
func (v view) policyKey() string {
	_, ns, name := v.policyRef()
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// template reads the binding's resource template from the cache.
func template(ctx context.Context, c client.Reader, b view) (*unstructured.Unstructured, error) {
	t := templateObject(b)
	err := c.Get(ctx, client.ObjectKeyFromObject(t), t)
	return t, err
}

func templateObject(b view) *unstructured.Unstructured {
	t := &unstructured.Unstructured{}
	t.SetAPIVersion(b.spec.Resource.APIVersion)
	t.SetKind(b.spec.Resource.Kind)
	t.SetNamespace(b.spec.Resource.Namespace)
	t.SetName(b.spec.Resource.Name)
	return t
}

// templateAtLeast reads the binding's template from the cache, or from the
// API server when the cache holds a version older than the one the binding
// records (spec.resource.resourceVersion) or one of its Works was built from
// (TemplateVersionAnnotation): after a change of leader or a restart of the
// hub's API server, the template informer may still be catching up while
// the binding and Work informers have, and a manifest built from it would
// send a version the user has already replaced.
func templateAtLeast(ctx context.Context, cache, api client.Reader, b view, works []workv1alpha1.Work) (*unstructured.Unstructured, error) {
	floors := []string{b.spec.Resource.ResourceVersion}
	for i := range works {
		floors = append(floors, works[i].Annotations[workkeys.TemplateVersionAnnotation])
	}
	t := templateObject(b)
	fresh, err := retry.ReadAtLeast(ctx, cache, api, client.ObjectKeyFromObject(t), t, floors...)
	if fresh && err == nil {
		ctrl.LoggerFrom(ctx).V(1).Info("the template cache is behind this binding or its Works: template read from the API server",
			"resourceVersion", t.GetResourceVersion())
	}
	return t, err
}

// worksOf lists the binding's Works by its permanent id, through
// WorkBindingIndex: a label selector would test every Work in the cache,
// every reconcile of every binding (quadratic in templates × members).
func worksOf(ctx context.Context, c client.Reader, b view) ([]workv1alpha1.Work, error) {
	id := b.obj.GetLabels()[b.idLabel()]
	if id == "" {
		return nil, nil
	}
	works := &workv1alpha1.WorkList{}
	err := c.List(ctx, works, client.MatchingFields{WorkBindingIndex: b.idLabel() + "=" + id})
	return works.Items, err
}

// storedWorksOf lists the binding's Works as the API server stores them,
// by its permanent-id label: what deleting a binding's Works must see. A
// cache may not yet hold a Work written moments ago (a new leader's cache
// catching up after a hub restart), and a Work missed then outlives its
// binding.
func storedWorksOf(ctx context.Context, api client.Reader, b view) ([]workv1alpha1.Work, error) {
	id := b.obj.GetLabels()[b.idLabel()]
	if id == "" {
		return nil, nil
	}
	works := &workv1alpha1.WorkList{}
	err := api.List(ctx, works, client.MatchingLabels{b.idLabel(): id})
	return works.Items, err
}

// ownerGone says, through api (the API server), whether no binding of b's
// kind carries the permanent id owner any more: a Work labelled with it
// was left behind by a deleted binding and may be taken over
// (works.AdoptOrphans).
func ownerGone(api client.Reader, b view) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, owner string) (bool, error) {
		var list client.ObjectList = &workv1alpha2.ResourceBindingList{}
		if b.clusterScoped {
			list = &workv1alpha2.ClusterResourceBindingList{}
		}
		if err := api.List(ctx, list, client.MatchingLabels{b.idLabel(): owner}); err != nil {
			return false, err
		}
		return meta.LenList(list) == 0, nil
	}
}

// WorkBindingIndex indexes Works by the binding they belong to: its
// permanent-id label, as "<label>=<id>" (a ResourceBinding's or a
// ClusterResourceBinding's).
const WorkBindingIndex = "work.federator.dev/binding"

// WorkBinding is WorkBindingIndex's value of a Work.
func WorkBinding(o client.Object) []string {
	var out []string
	for _, l := range []string{workv1alpha2.ResourceBindingPermanentIDLabel, workv1alpha2.ClusterResourceBindingPermanentIDLabel} {
		if id := o.GetLabels()[l]; id != "" {
			out = append(out, l+"="+id)
		}
	}
	return out
}

var (
	indexedMu sync.Mutex
	indexed   = map[client.FieldIndexer]bool{}
)

// indexWorks registers WorkBindingIndex with the manager's cache once,
// whichever of this package's controllers is set up first.
func indexWorks(mgr ctrl.Manager) error {
	indexedMu.Lock()
	defer indexedMu.Unlock()
	if indexed[mgr.GetFieldIndexer()] {
		return nil
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &workv1alpha1.Work{}, WorkBindingIndex, WorkBinding); err != nil {
		return err
	}
	indexed[mgr.GetFieldIndexer()] = true
	return nil
}

// unstamped is the observedGeneration binding conditions carry: none, as in
// Karmada. A binding's generation moves with every template change, so
// stamping it would cost every binding a status write per change even when
// no condition changed.
const unstamped = 0
