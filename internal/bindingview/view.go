package bindingview

import (
	"context"
	"sync"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// View is what the controllers need of a ResourceBinding or a
// ClusterResourceBinding, so one Reconcile serves both.
type View struct {
	Obj           client.Object
	Spec          *workv1alpha2.ResourceBindingSpec
	Status        *workv1alpha2.ResourceBindingStatus
	ClusterScoped bool
}

// New is the view of an empty binding of the kind clusterScoped says, to
// read one into.
func New(clusterScoped bool) View {
	if clusterScoped {
		b := &workv1alpha2.ClusterResourceBinding{}
		return View{Obj: b, Spec: &b.Spec, Status: &b.Status, ClusterScoped: true}
	}
	b := &workv1alpha2.ResourceBinding{}
	return View{Obj: b, Spec: &b.Spec, Status: &b.Status}
}

// ControllerName names a controller of this view's kind, as Karmada does:
// "resourcebinding" or "clusterresourcebinding", then suffix.
func (v View) ControllerName(suffix string) string {
	if v.ClusterScoped {
		return "clusterresourcebinding" + suffix
	}
	return "resourcebinding" + suffix
}

// Of is the view of a stored ResourceBinding or ClusterResourceBinding;
// its Spec and Status are nil for any other object.
func Of(obj client.Object) View {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return View{Obj: b, Spec: &b.Spec, Status: &b.Status}
	case *workv1alpha2.ClusterResourceBinding:
		return View{Obj: b, Spec: &b.Spec, Status: &b.Status, ClusterScoped: true}
	}
	return View{Obj: obj}
}

// statusOf is the status of a ResourceBinding or ClusterResourceBinding.
func statusOf(obj client.Object) *workv1alpha2.ResourceBindingStatus {
	if s := Of(obj).Status; s != nil {
		return s
	}
	return &workv1alpha2.ResourceBindingStatus{}
}

// Snapshot is a deep copy of the binding as read, for PatchStatus.
func (v View) Snapshot() client.Object { return v.Obj.DeepCopyObject().(client.Object) }

// Finalizer is the binding controller's finalizer on a binding of v's kind.
func (v View) Finalizer() string {
	if v.ClusterScoped {
		return workkeys.ClusterBindingFinalizer
	}
	return workkeys.BindingFinalizer
}

// IDLabel is the label that carries the permanent id of a binding of v's
// kind, on the binding and on its Works.
func (v View) IDLabel() string {
	if v.ClusterScoped {
		return workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	return workv1alpha2.ResourceBindingPermanentIDLabel
}

// PolicyRef names the policy that claims the binding's template, from the
// annotations the detector records on the binding (Karmada's keys):
// kind, namespace and name; kind is "" when none is recorded.
func (v View) PolicyRef() (kind, namespace, name string) {
	return workkeys.ClaimingPolicy(v.Obj.GetAnnotations())
}

// PolicyKey is how events name the claiming policy: "namespace/name" for a
// PropagationPolicy, "name" for a ClusterPropagationPolicy.
func (v View) PolicyKey() string {
	_, ns, name := v.PolicyRef()
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// TemplateObject is the binding's resource template, named but not read.
func TemplateObject(b View) *unstructured.Unstructured {
	t := &unstructured.Unstructured{}
	t.SetAPIVersion(b.Spec.Resource.APIVersion)
	t.SetKind(b.Spec.Resource.Kind)
	t.SetNamespace(b.Spec.Resource.Namespace)
	t.SetName(b.Spec.Resource.Name)
	return t
}

// WorksOf lists the binding's Works by its permanent id, through
// WorkBindingIndex: a label selector would test every Work in the cache,
// every reconcile of every binding (quadratic in templates × members).
func WorksOf(ctx context.Context, c client.Reader, b View) ([]workv1alpha1.Work, error) {
	id := b.Obj.GetLabels()[b.IDLabel()]
	if id == "" {
		return nil, nil
	}
	works := &workv1alpha1.WorkList{}
	err := c.List(ctx, works, client.MatchingFields{WorkBindingIndex: b.IDLabel() + "=" + id})
	return works.Items, err
}

// OfWork maps a Work to its binding of the kind clusterScoped says, by the
// annotations the binding controller writes on it.
func OfWork(clusterScoped bool) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		a := o.GetAnnotations()
		if clusterScoped {
			if name := a[workv1alpha2.ClusterResourceBindingAnnotationKey]; name != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
			}
			return nil
		}
		if name := a[workv1alpha2.ResourceBindingNameAnnotationKey]; name != "" {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{
				Namespace: a[workv1alpha2.ResourceBindingNamespaceAnnotationKey], Name: name}}}
		}
		return nil
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

// IndexWorks registers WorkBindingIndex with the manager's cache once,
// whichever of the binding and binding status controllers is set up first.
func IndexWorks(mgr ctrl.Manager) error {
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

// Unstamped is the observedGeneration binding conditions carry: none, as in
// Karmada. A binding's generation moves with every template change, so
// stamping it would cost every binding a status write per change even when
// no condition changed.
const Unstamped = 0
