package bindingstatus

import (
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/federator-dev/federator/internal/batch"
	"github.com/federator-dev/federator/internal/bindingview"
)

// Options tune the binding status controller.
type Options struct {
	// Workers per controller.
	Workers int
}

// SetupWithManager registers, for ResourceBindings and
// ClusterResourceBindings, the controller that aggregates Works' status. It
// runs when the binding's spec or a Work's status changes.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	if err := bindingview.IndexWorks(mgr); err != nil {
		return err
	}
	for _, clusterScoped := range []bool{false, true} {
		b := bindingview.New(clusterScoped)
		err := ctrl.NewControllerManagedBy(mgr).
			Named(b.ControllerName("-status")).
			For(b.Obj, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			Watches(&workv1alpha1.Work{}, batch.Handler(bindingview.OfWork(clusterScoped), statusBatch),
				builder.WithPredicates(workStatusChanged{})).
			WithOptions(controller.Options{MaxConcurrentReconciles: o.Workers}).
			Complete(&Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterScoped: clusterScoped})
		if err != nil {
			return err
		}
	}
	return nil
}

// statusBatch is how long Work status changes gather before their binding's
// status is aggregated: the Works of one binding report from their members
// at nearly the same moment, and one binding status write then carries them
// all, instead of one write per member (10 members: 1 write, not 10). It
// delays only what the binding and the template report, never what reaches
// a member.
const statusBatch = 250 * time.Millisecond

// workStatusChanged passes what the status must reflect: a Work's new
// status, and a Work gone.
type workStatusChanged struct{ predicate.Funcs }

func (workStatusChanged) Create(event.CreateEvent) bool { return false }

func (workStatusChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*workv1alpha1.Work)
	n, ok2 := e.ObjectNew.(*workv1alpha1.Work)
	return !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.Status, n.Status)
}
