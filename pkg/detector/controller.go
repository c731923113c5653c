package detector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	"github.com/karmada-io/karmada/pkg/util/validation"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policykeys "github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/holdqueue"
	"github.com/federator-dev/federator/internal/holdwrites"
	"github.com/federator-dev/federator/internal/redecide"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/pkg/metrics"
)

// Key names one resource template of any kind or, with Policy set, one
// PropagationPolicy / ClusterPropagationPolicy whose change must be fanned
// out to the templates it affects.
type Key struct {
	schema.GroupVersionKind
	Namespace, Name string
	Policy          bool
	// ByLazyPolicy marks a template queued by a change of a policy whose
	// spec.activationPreference is Lazy: the claim is recorded, but the
	// binding waits until the template itself next changes (Karmada's
	// ResourceChangeByKarmada). Set only for lazy policies, as Karmada
	// does, so a template has one key otherwise.
	ByLazyPolicy bool
}

// Reconciler is the detector: it watches the kinds policies select and
// keeps one binding per claimed template.
type Reconciler struct {
	client client.Client
	// holdPath is the controller's queue seen from the hold path: a
	// pass gives way when a hold change of its template is queued.
	holdPath *holdqueue.Watched[Key]
	// apiReader reads a template past a cache that is behind its binding
	// (templateAtLeast); the client when unset.
	apiReader client.Reader
	mgr       ctrl.Manager
	recorder  record.EventRecorder
	ctrl      controller.TypedController[Key]
	// noPolicyStatus: Options.NoPolicyStatus.
	noPolicyStatus bool

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
	// queue is the detector's own queue, captured from the first policy
	// event, so a policy's fan-out can enqueue templates.
	queue workqueue.TypedRateLimitingInterface[Key]
	// earlier holds, per policy Key, the versions of the policy that were
	// replaced before its fan-out ran: templates they selected are
	// re-evaluated too (a template the policy stops selecting, or one whose
	// claim is still on its way to the cache).
	earlier map[Key][]client.Object
	// catchUp: Options.CatchUp.
	catchUp *redecide.Round
	// templateCaches: Options.TemplateCaches.
	templateCaches CacheWatch
	// suspensionChanged marks the policy Keys whose fan-out carries a
	// change of spec.suspension: their templates are queued at
	// holdqueue.Hold.
	suspensionChanged map[Key]bool
}

// kindIndex indexes policies by the kinds their resourceSelectors name, so
// a template reconcile reads only the policies that can claim it.
const kindIndex = "policy.federator.dev/selected-kind"

func selectedKinds(o client.Object) []string {
	selectors := policykeys.SpecOf(o).ResourceSelectors
	kinds := make([]string, 0, len(selectors))
	for _, rs := range selectors {
		if !slices.Contains(kinds, rs.Kind) {
			kinds = append(kinds, rs.Kind)
		}
	}
	return kinds
}

// Options tune the detector.
type Options struct {
	// Workers per controller.
	Workers int
	// NoPolicyStatus: the hub's policy CRDs serve no status subresource
	// (a Karmada hub's own CRDs, which federator may not update), so the
	// policy conditions are not written; their Warning Events still are.
	NoPolicyStatus bool
	// CatchUp, when set, asks the detector to decide templates again after
	// the hub caches broke, and is told of each template decided
	// (internal/redecide).
	CatchUp *redecide.Round
	// TemplateCaches, when set, says whether the hub cache of a kind of
	// template watches the hub (internal/hubwatch): a pass counts for
	// CatchUp only when its template's cache did as it began.
	TemplateCaches CacheWatch
	// Deciders, when set, is told what hold changes the detector is
	// deciding (a policy's spec.suspension on its way into the binding),
	// by template key (redecide.TemplateKey): the dispatchers write no
	// release of that template while one is.
	Deciders *holdqueue.Deciders
}

// CacheWatch says whether the hub caches of templates of the given kinds
// watch the hub, and have for long enough to hold what was written before.
type CacheWatch interface {
	Current(templates ...schema.GroupKind) error
}

// SetupWithManager registers the detector: a template controller whose
// watches grow with the kinds policies select, and a policy controller that
// validates policies and adds those watches.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	d := &Reconciler{client: mgr.GetClient(), apiReader: mgr.GetAPIReader(), mgr: mgr, recorder: mgr.GetEventRecorderFor("resource-detector"),
		watched: map[schema.GroupVersionKind]bool{}, earlier: map[Key][]client.Object{}, suspensionChanged: map[Key]bool{},
		noPolicyStatus: o.NoPolicyStatus, catchUp: o.CatchUp, templateCaches: o.TemplateCaches}
	for _, p := range []client.Object{&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicy{}} {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), p, kindIndex, selectedKinds); err != nil {
			return err
		}
	}
	// A priority queue: a template whose holds change, and the templates of
	// a policy whose spec.suspension changes, go before bulk changes
	// (internal/holdqueue).
	// A pass gives way to hold changes (internal/holdqueue).
	queue := holdqueue.NewWatched[Key]()
	queue.Observe, queue.Workers = metrics.ObserveHoldQueueWait, o.Workers
	o.Deciders.Register("detector", func(key string) bool {
		return queue.Deciding(func(k Key) bool { return redecide.TemplateKey(k.GroupKind(), k.Namespace, k.Name) == key })
	})
	d.holdPath = queue
	c, err := controller.NewTyped[Key]("detector", mgr, controller.TypedOptions[Key]{
		Reconciler: d, MaxConcurrentReconciles: o.Workers, UsePriorityQueue: ptr.To(true), NewQueue: queue.NewQueue})
	if err != nil {
		return err
	}
	d.ctrl = c
	// A policy change re-evaluates the templates the policy selects or
	// claims, before and after the change (Affects). Annotations do not
	// count: what they hold is decided by the binding controller.
	for _, p := range []client.Object{&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicy{}} {
		if err := c.Watch(source.TypedKind[client.Object, Key](mgr.GetCache(), p,
			d.policyHandler(), predicate.GenerationChangedPredicate{})); err != nil {
			return err
		}
	}
	if o.CatchUp != nil {
		// After a break in the hub caches' watches, every bound template
		// is decided again, from caches that watch.
		if err := c.Watch(source.TypedChannel(o.CatchUp.Templates(), handler.TypedFuncs[redecide.Template, Key]{
			GenericFunc: func(_ context.Context, e event.TypedGenericEvent[redecide.Template], q workqueue.TypedRateLimitingInterface[Key]) {
				t := e.Object
				q.Add(Key{GroupVersionKind: schema.FromAPIVersionAndKind(t.APIVersion, t.Kind), Namespace: t.Namespace, Name: t.Name})
			}})); err != nil {
			return err
		}
	}
	// A PriorityClass a policy's schedulePriority names resolves into its
	// bindings (SchedulePriority).
	if err := c.Watch(source.TypedKind[client.Object, Key](mgr.GetCache(), client.Object(&schedulingv1.PriorityClass{}),
		d.priorityClassChanges())); err != nil {
		return err
	}
	// A binding gone while its template exists (the template deleted and
	// created again before the binding's deletion ended: writeBinding
	// leaves a binding being deleted alone) is created afresh.
	for _, b := range []client.Object{&workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}} {
		if err := c.Watch(source.TypedKind[client.Object, Key](mgr.GetCache(), b, handler.TypedFuncs[client.Object, Key]{
			DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[Key]) {
				if s := bindingSpec(e.Object); s != nil {
					q.Add(Key{GroupVersionKind: schema.FromAPIVersionAndKind(s.Resource.APIVersion, s.Resource.Kind),
						Namespace: s.Resource.Namespace, Name: s.Resource.Name})
				}
			}})); err != nil {
			return err
		}
	}
	pr := &policyReconciler{d: d}
	for name, p := range map[string]client.Object{
		"propagationpolicy":        &policyv1alpha1.PropagationPolicy{},
		"clusterpropagationpolicy": &policyv1alpha1.ClusterPropagationPolicy{},
	} {
		_, clusterScoped := p.(*policyv1alpha1.ClusterPropagationPolicy)
		if err := ctrl.NewControllerManagedBy(mgr).Named(name).
			For(p, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, clusterAnnotationsChanged, deletionStarted))).
			// A Cluster joining or leaving can make a name a policy lists
			// known or unknown (ClustersKnown).
			Watches(&clusterv1alpha1.Cluster{}, pr.clusterChanges(clusterScoped), builder.WithPredicates(joinsAndLeaves)).
			// ... and a PriorityClass coming or going, SchedulePriorityResolved.
			Watches(&schedulingv1.PriorityClass{}, pr.priorityClassChanges(clusterScoped)).
			Complete(pr.forKind(p)); err != nil {
			return err
		}
	}
	return nil
}

// notWatchingRetry is how soon a pass that did not count for the round of
// catching up (its caches did not watch yet) is repeated.
const notWatchingRetry = 500 * time.Millisecond

// Reconcile keeps the binding of one template in line with the policy that
// claims it, or fans a policy change out to the templates it affects.
func (d *Reconciler) Reconcile(ctx context.Context, key Key) (ctrl.Result, error) {
	if key.Policy {
		return ctrl.Result{}, d.fanOut(ctx, key)
	}
	start := time.Now()
	ticket := d.catchUp.Begin()
	// A pass counts for the round of catching up only when the template's
	// hub cache watched the hub as it began: one whose cache has not yet
	// seen what was written while it could not watch decides from what the
	// break hid (found by the chaos checker: the round ended on a template
	// the user had replaced during a hub restart, and its release went
	// out). Such a pass is repeated until it counts.
	var behind error
	if d.templateCaches != nil {
		behind = d.templateCaches.Current(key.GroupKind())
	}
	// The binding's generation once decided, when this pass wrote it or
	// found it up to date (0 when it wrote none or deleted it).
	var floor int64
	if d.holdPath != nil {
		ctx = holdwrites.WithTurn(ctx, d.holdPath.Turn(key))
	}
	outcome, err := d.reconcile(ctx, key, &floor)
	if errors.Is(err, holdwrites.ErrGaveWay) {
		// A hold change is queued, of this template or waiting for this
		// worker: this pass comes back and decides afresh.
		return retry.Soon(), nil
	}
	result := ctrl.Result{}
	if bindingKey := redecide.BindingKey(key.Namespace, names.GenerateBindingName(key.Kind, key.Name)); err == nil && behind == nil {
		d.catchUp.Detected(bindingKey, ticket, floor)
	} else if err == nil && d.catchUp.Waits(bindingKey) {
		outcome = strings.TrimPrefix(outcome+"; decided again once the hub cache of its kind watches: "+behind.Error(), "; ")
		// Soon, not through the rate limiter: the template's failures
		// during the break may have backed it off for minutes.
		result = ctrl.Result{RequeueAfter: notWatchingRetry}
	}
	if outcome != "" && err == nil {
		ctrl.LoggerFrom(ctx).V(1).Info(outcome, "template", key.Kind+" "+client.ObjectKey{Namespace: key.Namespace, Name: key.Name}.String(),
			"duration", time.Since(start).Round(time.Millisecond).String())
	}
	return retry.Quietly(result, err)
}

// reconcile returns what it did, for the log.
func (d *Reconciler) reconcile(ctx context.Context, key Key, floor *int64) (string, error) {
	template, err := d.templateAtLeast(ctx, key)
	if apierrors.IsNotFound(err) {
		return "template gone: binding deleted", d.deleteBinding(ctx, key)
	}
	if err != nil {
		return "", err
	}
	if Skipped(template) || !template.GetDeletionTimestamp().IsZero() {
		return "", nil
	}
	// Only policies selecting this kind can claim it (kindIndex).
	selectsKind := client.MatchingFields{kindIndex: key.Kind}
	pps := &policyv1alpha1.PropagationPolicyList{}
	if key.Namespace != "" {
		if err := d.client.List(ctx, pps, client.InNamespace(key.Namespace), selectsKind); err != nil {
			return "", err
		}
	}
	cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := d.client.List(ctx, cpps, selectsKind); err != nil {
		return "", err
	}
	claim, ok := Resolve(template, pps.Items, cpps.Items)
	if labels, annotations, changed := ClaimMetadata(template, claim, ok); changed {
		// Record the claim on the template as Karmada does; it keeps the
		// template with its policy until that policy lets go.
		held, wasHeld := stickyClaim(template, pps.Items, cpps.Items)
		patch := client.MergeFrom(template.DeepCopy())
		template.SetLabels(labels)
		template.SetAnnotations(annotations)
		err := d.client.Patch(ctx, template, patch)
		if wasHeld && ok && held.Key() != claim.Key() {
			// As Karmada's detector: the outcome of a preemption is an
			// Event on the template, a failure included.
			if err != nil {
				d.recorder.Event(template, corev1.EventTypeWarning, policykeys.EventReasonPreemptPolicyFailed, PreemptedMessage(claim, held, err))
			} else {
				d.recorder.Event(template, corev1.EventTypeNormal, policykeys.EventReasonPreemptPolicySucceed, PreemptedMessage(claim, held, nil))
			}
		}
		if err != nil {
			return "", err
		}
	}
	if !ok {
		// Like Karmada, a template no policy claims keeps what was
		// propagated; nothing is deleted because a policy went away.
		return "no policy claims it", nil
	}
	if err := d.foldAliases(ctx, claim); err != nil {
		return "", err
	}
	if errs := validation.ValidatePropagationSpec(*claim.Spec()); len(errs) > 0 {
		// Bad input changes nothing: the binding keeps its last good spec.
		d.recorder.Eventf(template, corev1.EventTypeWarning, policykeys.EventReasonApplyPolicyFailed,
			"policy %s is invalid, the template is left as it was: %v", claim.Key(), errs.ToAggregate())
		return "policy " + claim.Key() + " is invalid: template left as it was", nil
	}
	if key.ByLazyPolicy && claim.Spec().ActivationPreference == policyv1alpha1.LazyActivation {
		return "policy " + claim.Key() + " is Lazy: its change reaches the binding when the template next changes", nil
	}
	class, err := d.priorityClass(ctx, claim.Spec())
	if err != nil {
		return "", err
	}
	priority, err := SchedulePriority(claim.Spec(), class)
	if err != nil {
		// As Karmada: no binding, nor a changed one, while the priority
		// does not resolve; the policy's SchedulePriorityResolved says why,
		// and the PriorityClass's creation brings the template back here.
		d.recorder.Event(template, corev1.EventTypeWarning, policykeys.EventReasonApplyPolicyFailed, applyPolicyFailed(claim, err))
		return "policy " + claim.Key() + ": " + err.Error() + ": no binding written", nil
	}
	return d.writeBinding(ctx, template, claim, priority, floor)
}

// applyPolicyFailed is Karmada's ApplyPolicyFailed message.
func applyPolicyFailed(claim Claim, err error) string {
	if claim.PropagationPolicy != nil {
		return fmt.Sprintf("Apply policy(%s) failed: %v", claim.Key(), err)
	}
	return fmt.Sprintf("Apply cluster policy(%s) failed: %v", claim.Key(), err)
}

// lazyActivation reports whether a policy's changes wait for each
// template's next change (spec.activationPreference: Lazy).
func lazyActivation(policy client.Object) bool {
	return policykeys.SpecOf(policy).ActivationPreference == policyv1alpha1.LazyActivation
}
