package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	policykeys "github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/test/framework"
)

// Writing an operation as a person (or GitOps) does: the policy and its
// annotations as the state has them, template changes, Gates and their
// requests.

// policyFor is the PropagationPolicy as s has it: what a person (or GitOps)
// applies.
func policyFor(s state, members []string) *policyv1alpha1.PropagationPolicy {
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: policyName, Annotations: policyAnnotations(s)},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "web-a"},
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "web-b"},
				{APIVersion: "v1", Kind: "ConfigMap", Name: configMap},
				{APIVersion: "batch/v1", Kind: "Job", Name: job},
			},
			Placement:  policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: s.placed(members)}},
			Suspension: suspensionFor(s),
		},
	}
	return pp
}

func policyAnnotations(s state) map[string]string {
	a := map[string]string{}
	if s.PolicySuspended {
		a[policykeys.SuspendedAnnotation] = holdReason
	}
	for m := range s.PolicyClusters {
		a[policykeys.ClusterSuspendedAnnotationPrefix+m] = holdReason
	}
	if len(s.PolicyGates) > 0 {
		a[gatingv1alpha1.GatesAnnotation] = gatesAnnotation(s)
	}
	if s.DeletionDelay > 0 {
		a[policykeys.DeletionDelayAnnotation] = s.DeletionDelay.String()
	}
	if len(a) == 0 {
		return nil
	}
	return a
}

// gatesAnnotation is the value of gating.federator.dev/gates as s lists
// the gates.
func gatesAnnotation(s state) string {
	return strings.Join(slices.Sorted(maps.Keys(s.PolicyGates)), ",")
}

func suspensionFor(s state) *policyv1alpha1.Suspension {
	if !s.SuspendAll && len(s.SuspendOn) == 0 {
		return nil
	}
	sp := &policyv1alpha1.Suspension{}
	if s.SuspendAll {
		sp.Dispatching = ptr.To(true)
	}
	if len(s.SuspendOn) > 0 {
		on := slices.Sorted(maps.Keys(s.SuspendOn))
		sp.DispatchingOnClusters = &policyv1alpha1.SuspendClusters{ClusterNames: on}
	}
	return sp
}

// annotationPatch is a merge patch setting key to holdReason, or removing it.
func annotationPatch(key string, set bool) []byte {
	var v any
	if set {
		v = holdReason
	}
	raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: v}}})
	return raw
}

// clusterListPatch is the one merge patch an opPolicyClusterList writes,
// as `federator suspend|resume pp NAME --clusters a,b` does: for each
// member it names, suspended.propagation.federator.dev/<member> set to
// holdReason where next holds it, removed where it does not.
func clusterListPatch(o op, next state) []byte {
	annotations := map[string]any{}
	for _, m := range o.Clusters {
		var v any
		if next.PolicyClusters[m] {
			v = holdReason
		}
		annotations[policykeys.ClusterSuspendedAnnotationPrefix+m] = v
	}
	raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	return raw
}

// write sends o to the hub; next is the state it leaves (a gate request
// fills in its times). sent is when the write that took effect was sent
// (a retried write moves it). workloads: the members run workloads, and a
// Job template is created to run (newTemplate).
// callers sends the gate requests of a run with skew-clocks (nil: every
// one is an annotation this program writes).
func write(ctx context.Context, hub client.Client, callers *gateCallers, o op, next *state, members []string, workloads bool, sent *time.Time) error {
	patch := func(obj client.Object, raw []byte) error {
		return hub.Patch(ctx, obj, client.RawPatch(types.MergePatchType, raw))
	}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: policyName}}
	switch o.Kind {
	case opVersion:
		switch o.Template {
		case configMap:
			return patch(templateObject(o.Template), fmt.Appendf(nil, `{"data":{"version":%q}}`, o.Version))
		case job:
			return patch(templateObject(o.Template), fmt.Appendf(nil, `{"metadata":{"annotations":{"version":%q}}}`, o.Version))
		}
		return framework.SetImage(ctx, hub, namespace, o.Template, o.Version)
	case opTemplateSuspend:
		return patch(templateObject(o.Template), annotationPatch(policykeys.SuspendedAnnotation, next.Templates[o.Template].Suspended))
	case opTemplateCluster:
		return patch(templateObject(o.Template), annotationPatch(policykeys.ClusterSuspendedAnnotationPrefix+o.Member,
			next.Templates[o.Template].Clusters[o.Member]))
	case opPolicySuspend:
		return patch(pp, annotationPatch(policykeys.SuspendedAnnotation, next.PolicySuspended))
	case opPolicyCluster:
		return patch(pp, annotationPatch(policykeys.ClusterSuspendedAnnotationPrefix+o.Member, next.PolicyClusters[o.Member]))
	case opPolicyClusterList:
		return patch(pp, clusterListPatch(o, *next))
	case opGateList, opGateUnlist:
		var v any
		if len(next.PolicyGates) > 0 {
			v = gatesAnnotation(*next)
		}
		raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{gatingv1alpha1.GatesAnnotation: v}}})
		return patch(pp, raw)
	case opGateCreate:
		gate := gateObject(o.Gate)
		gate.Spec.Default = gatingv1alpha1.Closed
		if w := next.Gates[o.Gate].Window; w > 0 {
			gate.Spec.Window = &metav1.Duration{Duration: w}
		}
		if callers != nil {
			gate.Spec.SecretRef = &corev1.LocalObjectReference{Name: gateTokenSecret}
		}
		if next.Gates[o.Gate].Scheduled {
			gate.Spec.Schedules = []gatingv1alpha1.GateSchedule{{Name: "every-minute", Cron: "* * * * *",
				Duration: metav1.Duration{Duration: scheduleOpen}, Action: gatingv1alpha1.ActionOpen}}
		}
		*sent = time.Now()
		return hub.Create(ctx, gate)
	case opGateDelete:
		return hub.Delete(ctx, gateObject(o.Gate))
	case opGateOpen, opGateClose:
		return requestGate(ctx, hub, callers, o, next, sent)
	case opSuspendAll, opSuspendOn:
		// A merge patch keeps what it does not name: null removes.
		var dispatching, on any
		if next.SuspendAll {
			dispatching = true
		}
		if len(next.SuspendOn) > 0 {
			on = map[string]any{"clusterNames": slices.Sorted(maps.Keys(next.SuspendOn))}
		}
		// Written in one spelling, the other one's fields removed, so the
		// two never disagree (the hub refuses that).
		var suspension any = map[string]any{"dispatching": dispatching, "dispatchingOnClusters": on,
			"suspendDispatching": nil, "suspendDispatchingOnClusters": nil}
		if o.Alias {
			suspension = map[string]any{"suspendDispatching": dispatching, "suspendDispatchingOnClusters": on,
				"dispatching": nil, "dispatchingOnClusters": nil}
		}
		if dispatching == nil && on == nil {
			suspension = nil
		}
		raw, _ := json.Marshal(map[string]any{"spec": map[string]any{"suspension": suspension}})
		return patch(pp, raw)
	case opDeletionDelay:
		var v any
		if next.DeletionDelay > 0 {
			v = next.DeletionDelay.String()
		}
		raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{policykeys.DeletionDelayAnnotation: v}}})
		return patch(pp, raw)
	case opPlacement:
		raw, _ := json.Marshal(map[string]any{"spec": map[string]any{"placement": map[string]any{
			"clusterAffinity": map[string]any{"clusterNames": next.placed(members)}}}})
		return patch(pp, raw)
	case opDeleteTemplate:
		// As kubectl deletes: in the background. A Job's default is to
		// orphan its pods, which leaves it with a finalizer that only a
		// garbage collector removes, and a hub without --workloads runs
		// none.
		return hub.Delete(ctx, templateObject(o.Template), client.PropagationPolicy(metav1.DeletePropagationBackground))
	case opRecreateTemplate:
		return createAgain(ctx, sent, func() error {
			return hub.Create(ctx, newTemplate(o.Template, next.Templates[o.Template].Version, workloads))
		})
	case opDeletePolicy:
		return hub.Delete(ctx, pp)
	case opRolloutCreate, opRolloutPause, opRolloutPromote, opRolloutDelete:
		return writeRollout(ctx, hub, o, next, sent)
	case opOverride, opRelabel:
		return writeOverride(ctx, hub, o, *next)
	case opFreeze, opUnfreeze:
		return writeFreeze(ctx, hub, o)
	case opRecreatePolicy:
		// The deleted policy may linger while a finalizer is removed (the
		// controller may be down).
		return createAgain(ctx, sent, func() error { return hub.Create(ctx, policyFor(*next, members)) })
	}
	return fmt.Errorf("unknown operation %s", o.Kind)
}

// createAgain creates an object deleted a moment ago, retrying while the
// deleted one lingers (a finalizer not yet removed), as a person
// re-applying does; sent is when the create that took effect was sent.
func createAgain(ctx context.Context, sent *time.Time, create func() error) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		*sent = time.Now()
		err := create()
		if !apierrors.IsAlreadyExists(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// requestMargin: see requestGate.
const requestMargin = 1500 * time.Millisecond

func gateObject(name string) *gatingv1alpha1.Gate {
	return &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

// requestGate writes what `federator gate open|close NAME [--for D]`
// writes (gateState.request), timed when it is sent, and puts those times
// into next; or, with a caller, has that caller send it (skew.go). A request about to come into force (within requestMargin) is
// waited out rather than overwritten or cancelled: the gate controller may
// record it as applied while the write is on its way, and an applied
// request newer than every annotation stays in force (pkg/gatestate),
// which the model does not follow.
func requestGate(ctx context.Context, hub client.Client, callers *gateCallers, o op, next *state, sent *time.Time) error {
	open := o.Kind == opGateOpen
	g := next.Gates[o.Gate]
	for _, at := range []time.Time{g.OpenAt, g.CloseAt} {
		if wait := time.Until(at); wait > 0 && wait < requestMargin {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait + 100*time.Millisecond):
			}
		}
	}
	if o.Caller != callerAnnotation {
		return callers.send(ctx, hub, o, next, sent)
	}
	now := time.Now().UTC()
	*sent = now
	g = g.request(open, now, o.For)
	next.Gates = maps.Clone(next.Gates)
	next.Gates[o.Gate] = g
	stamp := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.Format(time.RFC3339Nano)
	}
	raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		gatingv1alpha1.OpenRequestAnnotation: stamp(g.OpenAt), gatingv1alpha1.CloseRequestAnnotation: stamp(g.CloseAt)}}})
	return hub.Patch(ctx, gateObject(o.Gate), client.RawPatch(types.MergePatchType, raw))
}
