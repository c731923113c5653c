package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"slices"
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
	faultKillController    = "kill-controller"
	faultPauseMember       = "pause-member"
	opSelfTestDirectMember = "self-test-direct-member-write"
)

// op is one user write, chosen by the seeded generator.
type op struct {
	Kind     string
	Template string
	Member   string
	// Version is the new version of an opVersion.
	Version string
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
	type choice struct {
		kind   string
		weight int
	}
	choices := []choice{{opVersion, 8}, {opTemplateSuspend, 3}, {opTemplateCluster, 2}}
	if s.PolicyExists {
		choices = append(choices, choice{opPolicySuspend, 3}, choice{opPolicyCluster, 2}, choice{opSuspendAll, 2},
			choice{opSuspendOn, 2}, choice{opDeletePolicy, 1})
	} else {
		choices = append(choices, choice{opRecreatePolicy, 4})
	}
	total := 0
	for _, c := range choices {
		total += c.weight
	}
	pick := g.rng.Intn(total)
	kind := choices[len(choices)-1].kind
	for _, c := range choices {
		if pick < c.weight {
			kind = c.kind
			break
		}
		pick -= c.weight
	}
	o := op{Kind: kind}
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
	}
	if o.Template != "" {
		n.Templates[o.Template] = t
	}
	return o, n
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
	if len(a) == 0 {
		return nil
	}
	return a
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

// write sends o to the hub; next is the state it leaves. sent is when the
// write that took effect was sent (a retried write moves it).
func write(ctx context.Context, hub client.Client, o op, next state, members []string, sent *time.Time) error {
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
			err := hub.Create(ctx, policyFor(next, members))
			if !apierrors.IsAlreadyExists(err) || time.Now().After(deadline) {
				return err
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return fmt.Errorf("unknown operation %s", o.Kind)
}
