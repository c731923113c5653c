package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	gatingv1alpha1 "github.com/federator-dev/federator/apis/policy/gating/v1alpha1"
	"github.com/federator-dev/federator/test/framework"
)

const (
	namespace  = "chaos"
	policyName = "chaos"
	configMap  = "conf"
	// holdReason is the value of every suspension annotation written.
	holdReason = "chaos"
)

// templates are the templates the run changes: two Deployments and a
// ConfigMap, all claimed by one PropagationPolicy.
var templates = []string{"web-a", "web-b", configMap}

// gateNames are the Gates the run creates, lists on the policy, opens,
// closes and deletes; gateWindow gives the spec.window a Gate is created
// with, so a request written without --for lapses too; the scheduled gate
// opens by its spec.schedules for scheduleOpen every minute.
var (
	gateNames     = []string{"approval", "windowed", "scheduled"}
	gateWindow    = map[string]time.Duration{"windowed": 4 * time.Second}
	gateScheduled = map[string]bool{"scheduled": true}
)

func isConfigMap(template string) bool { return template == configMap }

func templateObject(template string) client.Object {
	if isConfigMap(template) {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: template}}
	}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: template}}
}

// versionOf reads the version a stored copy of template carries.
func versionOf(template string) framework.Field {
	if isConfigMap(template) {
		return framework.JSONPath("{.data.version}")
	}
	return framework.Image
}

func newTemplate(template, version string) client.Object {
	if isConfigMap(template) {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: template},
			Data: map[string]string{"version": version}}
	}
	return framework.NewDeployment(namespace, template, version)
}

// Operation kinds, as the summary counts them.
const (
	opVersion              = "change-version"
	opTemplateSuspend      = "template-suspended-annotation"
	opTemplateCluster      = "template-cluster-annotation"
	opPolicySuspend        = "policy-suspended-annotation"
	opPolicyCluster        = "policy-cluster-annotation"
	opSuspendAll           = "spec.suspension.dispatching"
	opSuspendOn            = "spec.suspension.dispatchingOnClusters"
	opDeletePolicy         = "delete-policy"
	opRecreatePolicy       = "recreate-policy"
	opGateCreate           = "gate-create"
	opGateDelete           = "gate-delete"
	opGateList             = "gate-list"
	opGateUnlist           = "gate-unlist"
	opGateOpen             = "gate-open"
	opGateClose            = "gate-close"
	faultKillController    = "kill-controller"
	faultPauseMember       = "pause-member"
	faultRestartHub        = "restart-hub"
	faultRestartEtcd       = "restart-member-etcd"
	opSelfTestDirectMember = "self-test-direct-member-write"
)

// op is one user write, chosen by the seeded generator.
type op struct {
	Kind     string
	Template string
	Member   string
	// Version is the new version of an opVersion.
	Version string
	// Gate names the Gate of a gate operation.
	Gate string
	// For is the --for of a gate open or close request: the gate flips
	// back that long after (0: it does not).
	For time.Duration
	// Alias: a spec.suspension write in the suspension proposal's spelling
	// (suspendDispatching, suspendDispatchingOnClusters), which the hub
	// accepts beside Karmada's and must never prune into "no suspension".
	Alias bool
}

func (o op) String() string {
	s := o.Kind
	if o.Template != "" {
		s += " " + o.Template
	}
	if o.Member != "" {
		s += " " + o.Member
	}
	if o.Version != "" {
		s += " " + o.Version
	}
	if o.Gate != "" {
		s += " " + o.Gate
	}
	if o.For > 0 {
		s += " --for " + o.For.String()
	}
	if o.Alias {
		s += " (proposal spelling)"
	}
	return s
}

// generator chooses operations from a seeded source; the choice depends
// only on the seed and the model, never on timing, so a seed replays the
// same operations and faults in the same order.
type generator struct {
	rng     *rand.Rand
	seed    int64
	members []string
	version int
	// gates: choose Gate operations too. Without, a seed chooses the
	// operations it chose before Gates were added.
	gates bool
}

func (g *generator) newVersion(template string) string {
	g.version++
	v := fmt.Sprintf("s%d-v%d", g.seed, g.version)
	if isConfigMap(template) {
		return v
	}
	return "chaos.local/web:" + v
}

// next picks an operation valid in s and returns it with the state it leaves.
func (g *generator) next(s state) (op, state) {
	choices := []choice{{opVersion, 8}, {opTemplateSuspend, 3}, {opTemplateCluster, 2}}
	if s.PolicyExists {
		choices = append(choices, choice{opPolicySuspend, 3}, choice{opPolicyCluster, 2}, choice{opSuspendAll, 2},
			choice{opSuspendOn, 2}, choice{opDeletePolicy, 1})
	} else {
		choices = append(choices, choice{opRecreatePolicy, 4})
	}
	if g.gates {
		choices = append(choices, choice{opGate, 6})
	}
	kind := pick(g.rng, choices)
	o := op{Kind: kind}
	if kind == opGate {
		o = g.gateOp(s)
		kind = o.Kind
	}
	n := s.clone()
	switch kind {
	case opVersion, opTemplateSuspend, opTemplateCluster:
		o.Template = templates[g.rng.Intn(len(templates))]
	}
	switch kind {
	case opTemplateCluster, opPolicyCluster, opSuspendOn:
		o.Member = g.members[g.rng.Intn(len(g.members))]
	}
	// As often as not, lift one of the holds in force instead: with
	// every hold a coin flip, versions would hardly ever be released.
	if lifts := liftable(s); len(lifts) > 0 && kind != opVersion && kind != opRecreatePolicy && g.rng.Intn(2) == 0 {
		o = lifts[g.rng.Intn(len(lifts))]
		kind = o.Kind
	}
	if kind == opSuspendAll || kind == opSuspendOn {
		o.Alias = g.rng.Intn(2) == 0
	}
	// Mostly an open that lapses during the run, the interesting case:
	// the gate holds again by the clock; sometimes one that lasts (until
	// the next request, or the gate's spec.window). A close flips back
	// open now and then.
	switch {
	case kind == opGateOpen && g.rng.Intn(3) > 0, kind == opGateClose && g.rng.Intn(4) == 0:
		o.For = time.Duration(1+g.rng.Intn(6)) * time.Second
	}
	t := n.Templates[o.Template]
	switch kind {
	case opVersion:
		o.Version = g.newVersion(o.Template)
		t.Version = o.Version
	case opTemplateSuspend:
		t.Suspended = !t.Suspended
	case opTemplateCluster:
		t.Clusters = toggle(t.Clusters, o.Member)
	case opPolicySuspend:
		n.PolicySuspended = !n.PolicySuspended
	case opPolicyCluster:
		n.PolicyClusters = toggle(n.PolicyClusters, o.Member)
	// The hub refuses dispatching: true beside a dispatchingOnClusters
	// list (an admission policy), so one replaces the other, as a person
	// has to.
	case opSuspendAll:
		n.SuspendAll = !n.SuspendAll
		if n.SuspendAll {
			n.SuspendOn = nil
		}
	case opSuspendOn:
		if n.SuspendAll {
			n.SuspendAll, n.SuspendOn = false, map[string]bool{o.Member: true}
		} else {
			n.SuspendOn = toggle(n.SuspendOn, o.Member)
		}
	case opDeletePolicy:
		frozen := s.clone()
		n.PolicyExists, n.Frozen = false, &frozen
	case opRecreatePolicy:
		n.PolicyExists, n.Frozen = true, nil
		n.DeletedSent, n.DeletedDone = time.Time{}, time.Time{}
	case opGateCreate:
		if n.Gates == nil {
			n.Gates = map[string]gateState{}
		}
		n.Gates[o.Gate] = gateState{Window: gateWindow[o.Gate], Scheduled: gateScheduled[o.Gate]}
	case opGateDelete:
		delete(n.Gates, o.Gate)
	case opGateList, opGateUnlist:
		n.PolicyGates = toggle(n.PolicyGates, o.Gate)
		// opGateOpen and opGateClose: the request times are the write's
		// (write fills them in).
	}
	if o.Template != "" {
		n.Templates[o.Template] = t
	}
	return o, n
}

// opGate stands for the Gate operations when the kind is drawn; gateOp
// chooses which.
const opGate = "gate"

type choice struct {
	kind   string
	weight int
}

// pick draws one kind of choices by weight.
func pick(rng *rand.Rand, choices []choice) string {
	total := 0
	for _, c := range choices {
		total += c.weight
	}
	n := rng.Intn(total)
	for _, c := range choices {
		if n < c.weight {
			return c.kind
		}
		n -= c.weight
	}
	return choices[len(choices)-1].kind
}

// gateOp chooses a Gate and an operation valid for it in s: create it
// (closed) when it does not exist, else open, close or delete it (a
// missing gate a policy lists holds); list it on the policy or take it off.
// The choice reads only what exists and what is listed, never whether a
// gate is open now, which depends on the clock.
func (g *generator) gateOp(s state) op {
	name := gateNames[g.rng.Intn(len(gateNames))]
	var choices []choice
	if _, ok := s.Gates[name]; ok {
		choices = append(choices, choice{opGateOpen, 4}, choice{opGateClose, 2}, choice{opGateDelete, 1})
	} else {
		choices = append(choices, choice{opGateCreate, 3})
	}
	if s.PolicyExists {
		if s.PolicyGates[name] {
			choices = append(choices, choice{opGateUnlist, 1})
		} else {
			choices = append(choices, choice{opGateList, 3})
		}
	}
	return op{Kind: pick(g.rng, choices), Gate: name}
}

// liftable are the operations that would lift a hold in force in s, in
// a fixed order.
func liftable(s state) []op {
	var out []op
	for _, t := range templates {
		ts := s.Templates[t]
		if ts.Suspended {
			out = append(out, op{Kind: opTemplateSuspend, Template: t})
		}
		for _, m := range slices.Sorted(maps.Keys(ts.Clusters)) {
			out = append(out, op{Kind: opTemplateCluster, Template: t, Member: m})
		}
	}
	if !s.PolicyExists {
		return out
	}
	if s.PolicySuspended {
		out = append(out, op{Kind: opPolicySuspend})
	}
	for _, m := range slices.Sorted(maps.Keys(s.PolicyClusters)) {
		out = append(out, op{Kind: opPolicyCluster, Member: m})
	}
	if s.SuspendAll {
		out = append(out, op{Kind: opSuspendAll})
	}
	for _, m := range slices.Sorted(maps.Keys(s.SuspendOn)) {
		out = append(out, op{Kind: opSuspendOn, Member: m})
	}
	// A gate the policy lists is lifted by opening it (it may be open
	// already: which depends on the clock) or by taking it off the list.
	for _, name := range slices.Sorted(maps.Keys(s.PolicyGates)) {
		if _, ok := s.Gates[name]; ok {
			out = append(out, op{Kind: opGateOpen, Gate: name})
		}
		out = append(out, op{Kind: opGateUnlist, Gate: name})
	}
	return out
}

func toggle(set map[string]bool, key string) map[string]bool {
	set = maps.Clone(set)
	if set == nil {
		set = map[string]bool{}
	}
	if set[key] {
		delete(set, key)
	} else {
		set[key] = true
	}
	return set
}

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
			},
			Placement:  policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
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

// write sends o to the hub; next is the state it leaves (a gate request
// fills in its times). sent is when the write that took effect was sent
// (a retried write moves it).
func write(ctx context.Context, hub client.Client, o op, next *state, members []string, sent *time.Time) error {
	patch := func(obj client.Object, raw []byte) error {
		return hub.Patch(ctx, obj, client.RawPatch(types.MergePatchType, raw))
	}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: policyName}}
	switch o.Kind {
	case opVersion:
		if isConfigMap(o.Template) {
			return patch(templateObject(o.Template), fmt.Appendf(nil, `{"data":{"version":%q}}`, o.Version))
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
		if next.Gates[o.Gate].Scheduled {
			gate.Spec.Schedules = []gatingv1alpha1.GateSchedule{{Name: "every-minute", Cron: "* * * * *",
				Duration: metav1.Duration{Duration: scheduleOpen}, Action: gatingv1alpha1.ActionOpen}}
		}
		*sent = time.Now()
		return hub.Create(ctx, gate)
	case opGateDelete:
		return hub.Delete(ctx, gateObject(o.Gate))
	case opGateOpen, opGateClose:
		return requestGate(ctx, hub, o, next, sent)
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
	case opDeletePolicy:
		return hub.Delete(ctx, pp)
	case opRecreatePolicy:
		// The deleted policy may linger while a finalizer is removed (the
		// controller may be down): a person re-applying retries as well.
		deadline := time.Now().Add(60 * time.Second)
		for {
			*sent = time.Now()
			err := hub.Create(ctx, policyFor(*next, members))
			if !apierrors.IsAlreadyExists(err) || time.Now().After(deadline) {
				return err
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return fmt.Errorf("unknown operation %s", o.Kind)
}

// requestMargin: see requestGate.
const requestMargin = 1500 * time.Millisecond

func gateObject(name string) *gatingv1alpha1.Gate {
	return &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

// requestGate writes what `federator gate open|close NAME [--for D]`
// writes (gateState.request), timed when it is sent, and puts those times
// into next. A request about to come into force (within requestMargin) is
// waited out rather than overwritten or cancelled: the gate controller may
// record it as applied while the write is on its way, and an applied
// request newer than every annotation stays in force (pkg/gatestate),
// which the model does not follow.
func requestGate(ctx context.Context, hub client.Client, o op, next *state, sent *time.Time) error {
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
