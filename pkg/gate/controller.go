package gate

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/pkg/gatestate"
)

// Reconciler keeps each Gate's status current: Opened and why, the request
// in force, until when, and re-evaluates it exactly when it can change (gatestate.At).
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Clock    clock.PassiveClock
}

// Options tune the gate controller.
type Options struct {
	Workers int
	// Clock, when set, replaces the wall clock (tests).
	Clock clock.PassiveClock
}

// minRequeue keeps a gate evaluated a hair early from spinning.
const minRequeue = 50 * time.Millisecond

// Reconcile evaluates one gate now and records the outcome.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g := &gatingv1alpha1.Gate{}
	if err := r.Client.Get(ctx, req.NamespacedName, g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := g.DeepCopy()
	now := r.Clock.Now()
	e := gatestate.At(g, now)

	g.Status.ObservedGeneration = g.Generation
	g.Status.RequestedAt, g.Status.ResetToDefaultAt = nil, nil
	if e.Request != nil {
		g.Status.RequestedAt = &metav1.Time{Time: e.Request.At}
	}
	if e.Until != nil {
		g.Status.ResetToDefaultAt = &metav1.Time{Time: *e.Until}
	}
	wasOpen := meta.IsStatusConditionTrue(g.Status.Conditions, gatingv1alpha1.ConditionOpened)
	_, evaluated := conditionOf(g.Status.Conditions, gatingv1alpha1.ConditionOpened)
	opened := metav1.Condition{Type: gatingv1alpha1.ConditionOpened, Status: metav1.ConditionFalse, Reason: e.Reason, Message: e.Message}
	if e.Open {
		opened.Status = metav1.ConditionTrue
	}
	conditions.Set(&g.Status.Conditions, g.Generation, opened)
	valid := metav1.Condition{Type: gatingv1alpha1.ConditionRequestValid, Status: metav1.ConditionTrue,
		Reason: gatingv1alpha1.ReasonRequestsValid, Message: "open and close requests are readable"}
	if len(e.Problems) > 0 {
		valid = metav1.Condition{Type: gatingv1alpha1.ConditionRequestValid, Status: metav1.ConditionFalse,
			Reason: gatingv1alpha1.ReasonInvalidRequest, Message: strings.Join(e.Problems, "; ")}
	}
	validChanged := conditions.Set(&g.Status.Conditions, g.Generation, valid)
	p, reason, msg := progress(e.Reason, opened.Message, valid)
	conditions.SetProgress(&g.Status.Conditions, g.Generation, p, reason, msg)

	// Locked: the events below tell of the transition this write stores.
	if _, err := conditions.PatchStatus(ctx, r.Client, before, g, true); err != nil {
		return retry.Quietly(ctrl.Result{}, err)
	}
	if evaluated && wasOpen != e.Open || !evaluated {
		reason := gatingv1alpha1.EventReasonGateClosed
		if e.Open {
			reason = gatingv1alpha1.EventReasonGateOpened
		}
		r.Recorder.Event(g, corev1.EventTypeNormal, reason, e.Message)
	}
	if validChanged && len(e.Problems) > 0 {
		r.Recorder.Event(g, corev1.EventTypeWarning, gatingv1alpha1.EventReasonInvalidRequest, valid.Message)
	}
	next := e.Next.Sub(now)
	if next < minRequeue {
		next = minRequeue
	}
	ctrl.LoggerFrom(ctx).V(1).Info("gate evaluated", "open", e.Open, "why", e.Message, "next", next.Round(time.Millisecond).String())
	return ctrl.Result{RequeueAfter: next}, nil
}

// progress is what a GitOps tool reads of a gate (kstatus): open or
// closed, a gate is where its spec and requests put it, so it is Current;
// it is Failed while a schedule or a request cannot be read, since only a
// person can fix that (the gate stays closed meanwhile).
func progress(reason, message string, valid metav1.Condition) (conditions.Progress, string, string) {
	switch {
	case reason == gatingv1alpha1.ReasonInvalidSchedule:
		return conditions.Failed, reason, message
	case valid.Status != metav1.ConditionTrue:
		return conditions.Failed, valid.Reason, valid.Message
	}
	return conditions.Current, reason, message
}

func conditionOf(conds []metav1.Condition, t string) (metav1.Condition, bool) {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return *c, true
	}
	return metav1.Condition{}, false
}

// SetupWithManager registers the gate controller: a Gate is evaluated when
// its spec or annotations change, and again when Evaluate says it can next
// change. Its own status writes do not wake it.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	clk := o.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).Named("gate").
		For(&gatingv1alpha1.Gate{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.Workers}).
		Complete(&Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("gate-controller"), Clock: clk})
}
