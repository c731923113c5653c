package hold

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/utils/ptr"
)

const suspended = "propagation.federator.dev/suspended"

func template(annotations map[string]string) Object {
	return Object{Kind: "Deployment", Namespace: "shop", Name: "web", Annotations: annotations}
}

func policy(annotations map[string]string) Object {
	return Object{Kind: "PropagationPolicy", Namespace: "shop", Name: "web", Annotations: annotations}
}

func onClusters(names ...string) *policyv1alpha1.Suspension {
	return &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: names}}
}

func all(v bool) *policyv1alpha1.Suspension {
	return &policyv1alpha1.Suspension{Dispatching: ptr.To(v)}
}

// checksHolding lists, per cluster, the names of the checks that hold it.
var (
	closedGate = Gate{Ref: "ops/sre-approval", ListedBy: "PropagationPolicy shop/web", Found: true, Why: "Gate closed by default"}
	openGate   = Gate{Ref: "ops/window", ListedBy: "Cluster member2", Found: true, Opened: true}
	// templateGate is a closed gate the template lists.
	templateGate = Gate{Ref: "shop/approval", ListedBy: "Deployment shop/web", Found: true, Why: "Gate closed by default"}
)

var canaryOnly = &Rollout{Name: "Rollout shop/web", Released: map[string]bool{"member1": true},
	Waiting: map[string]string{"member2": "stage 'rest' waits for stage 'canary' to be healthy"}}

func checksHolding(d map[string]Decision) map[string][]string {
	out := map[string][]string{}
	for cluster, decision := range d {
		for _, h := range decision.Holds {
			out[cluster] = append(out[cluster], h.Check)
		}
	}
	return out
}

func TestDecide(t *testing.T) {
	clusters := []string{"member1", "member2", "member3"}
	cases := []struct {
		name string
		in   Input
		want map[string][]string // cluster → checks holding it, in order
	}{
		{"nothing holds a template with no suspension and no annotation",
			Input{Template: template(nil), Policy: policy(nil)}, map[string][]string{}},
		{"a freeze holds the clusters it holds, after the holders of the template and the policy",
			Input{Template: template(map[string]string{suspended: "why"}), Policy: policy(nil),
				Frozen: map[string]string{"member2": "Freeze freeze-a holds every write to member2"}},
			map[string][]string{"member1": {"TemplateSuspended"}, "member2": {"TemplateSuspended", "Frozen"}, "member3": {"TemplateSuspended"}}},
		{"an empty suspension holds nothing",
			Input{Template: template(nil), Policy: policy(nil), Suspension: &policyv1alpha1.Suspension{}}, map[string][]string{}},
		{"dispatching: false holds nothing",
			Input{Template: template(nil), Policy: policy(nil), Suspension: all(false)}, map[string][]string{}},
		{"dispatching: true holds every cluster",
			Input{Template: template(nil), Policy: policy(nil), Suspension: all(true)},
			map[string][]string{"member1": {"PolicySuspension"}, "member2": {"PolicySuspension"}, "member3": {"PolicySuspension"}}},
		{"dispatchingOnClusters holds only the clusters it lists",
			Input{Template: template(nil), Policy: policy(nil), Suspension: onClusters("member2", "member3")},
			map[string][]string{"member2": {"PolicySuspension"}, "member3": {"PolicySuspension"}}},
		{"dispatchingOnClusters naming no target holds nothing when the registered clusters are not known",
			Input{Template: template(nil), Policy: policy(nil), Suspension: onClusters("member9")}, map[string][]string{}},
		{"dispatchingOnClusters naming a registered cluster that is no target holds nothing",
			Input{Template: template(nil), Policy: policy(nil), Suspension: onClusters("member9"), KnownClusters: []string{"member1", "member9"}},
			map[string][]string{}},
		{"dispatchingOnClusters naming an unregistered cluster (a typo) holds every cluster",
			Input{Template: template(nil), Policy: policy(nil), Suspension: onClusters("member2", "membr3"),
				KnownClusters: []string{"member1", "member2", "member3"}},
			map[string][]string{"member1": {"UnknownSuspendedCluster"}, "member2": {"PolicySuspension", "UnknownSuspendedCluster"},
				"member3": {"UnknownSuspendedCluster"}}},
		{"the annotation on the template holds every cluster",
			Input{Template: template(map[string]string{suspended: "true"}), Policy: policy(nil)},
			map[string][]string{"member1": {"TemplateSuspended"}, "member2": {"TemplateSuspended"}, "member3": {"TemplateSuspended"}}},
		{"the annotation on the policy holds every cluster",
			Input{Template: template(nil), Policy: policy(map[string]string{suspended: "incident 1"})},
			map[string][]string{"member1": {"PolicySuspended"}, "member2": {"PolicySuspended"}, "member3": {"PolicySuspended"}}},
		{"an empty annotation value still holds (fail safe: the key was set on purpose)",
			Input{Template: template(map[string]string{suspended: ""}), Policy: policy(nil)},
			map[string][]string{"member1": {"TemplateSuspended"}, "member2": {"TemplateSuspended"}, "member3": {"TemplateSuspended"}}},
		{"an annotation on an unknown policy holds nothing it cannot name",
			Input{Template: template(nil), Policy: Object{Annotations: map[string]string{suspended: "x"}}}, map[string][]string{}},
		{"every holder is reported, the template's first",
			Input{Template: template(map[string]string{suspended: "a"}), Policy: policy(map[string]string{suspended: "b"}),
				Suspension: onClusters("member1")},
			map[string][]string{"member1": {"TemplateSuspended", "PolicySuspended", "PolicySuspension"},
				"member2": {"TemplateSuspended", "PolicySuspended"}, "member3": {"TemplateSuspended", "PolicySuspended"}}},
		{"the per-cluster annotation on the template holds that cluster only",
			Input{Template: template(map[string]string{"suspended.propagation.federator.dev/member2": "canary bad"}), Policy: policy(nil)},
			map[string][]string{"member2": {"ClusterSuspended"}}},
		{"the per-cluster annotation on the policy holds that cluster only",
			Input{Template: template(nil), Policy: policy(map[string]string{"suspended.propagation.federator.dev/member3": "true"})},
			map[string][]string{"member3": {"ClusterSuspended"}}},
		{"a per-cluster annotation naming no target holds nothing",
			Input{Template: template(map[string]string{"suspended.propagation.federator.dev/member9": "x"}), Policy: policy(nil)}, map[string][]string{}},
		{"a per-cluster annotation naming a registered cluster that is no target holds nothing",
			Input{Template: template(map[string]string{"suspended.propagation.federator.dev/member9": "x"}), Policy: policy(nil),
				KnownClusters: []string{"member1", "member2", "member3", "member9"}}, map[string][]string{}},
		{"a per-cluster annotation on the template naming an unregistered cluster (a typo) holds every cluster",
			Input{Template: template(map[string]string{"suspended.propagation.federator.dev/membr2": "canary bad"}), Policy: policy(nil),
				KnownClusters: []string{"member1", "member2", "member3"}},
			map[string][]string{"member1": {"UnknownSuspendedClusterAnnotation"}, "member2": {"UnknownSuspendedClusterAnnotation"},
				"member3": {"UnknownSuspendedClusterAnnotation"}}},
		{"a per-cluster annotation on the policy naming an unregistered cluster holds every cluster, beside the one it holds",
			Input{Template: template(nil), Policy: policy(map[string]string{"suspended.propagation.federator.dev/member1": "true",
				"suspended.propagation.federator.dev/left": "true"}), KnownClusters: []string{"member1", "member2", "member3"}},
			map[string][]string{"member1": {"ClusterSuspended", "UnknownSuspendedClusterAnnotation"},
				"member2": {"UnknownSuspendedClusterAnnotation"}, "member3": {"UnknownSuspendedClusterAnnotation"}}},
		{"a per-cluster annotation on an unknown policy holds nothing it cannot name",
			Input{Template: template(nil), Policy: Object{Annotations: map[string]string{"suspended.propagation.federator.dev/membr2": "x"}},
				KnownClusters: []string{"member1", "member2", "member3"}}, map[string][]string{}},
		{"a closed gate the policy lists holds every cluster",
			Input{Template: template(nil), Policy: policy(nil), PolicyGates: []Gate{closedGate}},
			map[string][]string{"member1": {"GateClosed"}, "member2": {"GateClosed"}, "member3": {"GateClosed"}}},
		{"a closed gate the template lists holds every cluster",
			Input{Template: template(nil), Policy: policy(nil), TemplateGates: []Gate{templateGate}},
			map[string][]string{"member1": {"GateClosed"}, "member2": {"GateClosed"}, "member3": {"GateClosed"}}},
		{"a template's gate holds with no policy known (it is the template's own)",
			Input{Template: template(nil), TemplateGates: []Gate{templateGate}},
			map[string][]string{"member1": {"GateClosed"}, "member2": {"GateClosed"}, "member3": {"GateClosed"}}},
		{"an unreadable gate reference on a template holds every cluster (fail safe)",
			Input{Template: template(nil), Policy: policy(nil), TemplateGates: []Gate{{Ref: "bare", ListedBy: "ClusterRole reader",
				Problem: "gate 'bare' needs a namespace"}}},
			map[string][]string{"member1": {"GateClosed"}, "member2": {"GateClosed"}, "member3": {"GateClosed"}}},
		{"open gates hold nothing",
			Input{Template: template(nil), Policy: policy(nil), PolicyGates: []Gate{openGate}, TemplateGates: []Gate{openGate},
				ClusterGates: map[string][]Gate{"member2": {openGate}}}, map[string][]string{}},
		{"a closed gate a Cluster lists holds that cluster only",
			Input{Template: template(nil), Policy: policy(nil), ClusterGates: map[string][]Gate{"member2": {closedGate}}},
			map[string][]string{"member2": {"GateClosed"}}},
		{"a missing gate holds (fail safe)",
			Input{Template: template(nil), Policy: policy(nil), PolicyGates: []Gate{{Ref: "ops/typo", ListedBy: "PropagationPolicy shop/web"}}},
			map[string][]string{"member1": {"GateClosed"}, "member2": {"GateClosed"}, "member3": {"GateClosed"}}},
		{"an unreadable gate reference holds (fail safe)",
			Input{Template: template(nil), Policy: policy(nil), ClusterGates: map[string][]Gate{"member1": {{Ref: "bare", Problem: "gate 'bare' needs a namespace"}}}},
			map[string][]string{"member1": {"GateClosed"}}},
		{"a suspension and a gate both hold, the suspension first",
			Input{Template: template(nil), Policy: policy(nil), Suspension: all(true), PolicyGates: []Gate{closedGate}},
			map[string][]string{"member1": {"PolicySuspension", "GateClosed"}, "member2": {"PolicySuspension", "GateClosed"},
				"member3": {"PolicySuspension", "GateClosed"}}},
		{"a rollout holds the clusters it has not released the current content to",
			Input{Template: template(nil), Policy: policy(nil), Rollout: canaryOnly},
			map[string][]string{"member2": {"RolloutStage"}, "member3": {"RolloutStage"}}},
		{"a rollout that released nothing (content not taken in yet) holds every cluster",
			Input{Template: template(nil), Policy: policy(nil), Rollout: &Rollout{Name: "Rollout shop/web"}},
			map[string][]string{"member1": {"RolloutStage"}, "member2": {"RolloutStage"}, "member3": {"RolloutStage"}}},
		{"a released cluster is still held by a suspension",
			Input{Template: template(nil), Policy: policy(nil), Suspension: onClusters("member1"), Rollout: canaryOnly},
			map[string][]string{"member1": {"PolicySuspension"}, "member2": {"RolloutStage"}, "member3": {"RolloutStage"}}},
		{"the policy's suspension without a known policy still holds",
			Input{Template: template(nil), Suspension: all(true)},
			map[string][]string{"member1": {"PolicySuspension"}, "member2": {"PolicySuspension"}, "member3": {"PolicySuspension"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.in, clusters, Checks)
			if len(d) != len(clusters) {
				t.Fatalf("got decisions for %d clusters, want %d", len(d), len(clusters))
			}
			if got := checksHolding(d); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("holding checks = %v, want %v", got, tc.want)
			}
			for cluster, decision := range d {
				if decision.Held() != (len(tc.want[cluster]) > 0) {
					t.Errorf("%s: Held() = %v", cluster, decision.Held())
				}
				wantReason := "SuspendDispatching"
				if len(tc.want[cluster]) > 0 && (tc.want[cluster][0] == "GateClosed" || tc.want[cluster][0] == "RolloutStage") {
					wantReason = tc.want[cluster][0]
				}
				if decision.Held() && decision.Reason() != wantReason {
					t.Errorf("%s: reason %q, want %s", cluster, decision.Reason(), wantReason)
				}
			}
		})
	}
}

// Every combination of the holders: a cluster is held exactly when one of
// them alone would hold it, and the decision lists each of those.
func TestDecideComposesEveryCombination(t *testing.T) {
	templates := []Object{template(nil), template(map[string]string{suspended: "true"}),
		template(map[string]string{"suspended.propagation.federator.dev/member2": "x"}),
		template(map[string]string{"suspended.propagation.federator.dev/membr2": "x"})}
	policies := []Object{policy(nil), policy(map[string]string{suspended: "why"}), {},
		policy(map[string]string{"suspended.propagation.federator.dev/member1": "true"})}
	suspensions := []*policyv1alpha1.Suspension{nil, all(false), all(true), onClusters("member1"), onClusters("typo")}
	gates := []map[string][]Gate{nil, {"member2": {closedGate}}, {"member1": {openGate}}}
	templateGates := [][]Gate{nil, {templateGate}, {openGate}}
	rollouts := []*Rollout{nil, canaryOnly, {Name: "Rollout shop/web"}}
	clusters := []string{"member1", "member2"}
	for _, tpl := range templates {
		for _, pol := range policies {
			for _, s := range suspensions {
				for _, g := range gates {
					for _, tg := range templateGates {
						for _, ro := range rollouts {
							in := Input{Template: tpl, Policy: pol, Suspension: s, ClusterGates: g, TemplateGates: tg, KnownClusters: clusters, Rollout: ro}
							got := Decide(in, clusters, Checks)
							for _, cluster := range clusters {
								var want []string
								for _, c := range Checks {
									if _, held := c.Holds(in, cluster); held {
										want = append(want, c.Name)
									}
								}
								if g := checksHolding(got)[cluster]; !reflect.DeepEqual(g, want) {
									t.Errorf("%+v on %s: %v, want %v", in, cluster, g, want)
								}
							}
						}
					}
				}
			}
		}
	}
}

func TestMessagesSayWhatHoldsAndWhatReleases(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want []string
	}{
		{"template annotation with a reason",
			Input{Template: template(map[string]string{suspended: "incident 4711"}), Policy: policy(nil)},
			[]string{`propagation.federator.dev/suspended on Deployment shop/web ("incident 4711")`, "remove the annotation to resume"}},
		{"policy annotation without a reason",
			Input{Template: template(nil), Policy: policy(map[string]string{suspended: "true"})},
			[]string{"on PropagationPolicy shop/web;", "remove the annotation"}},
		{"per-cluster annotation",
			Input{Template: template(map[string]string{"suspended.propagation.federator.dev/member1": "canary bad"}), Policy: policy(nil)},
			[]string{`suspended.propagation.federator.dev/member1 on Deployment shop/web ("canary bad")`, "remove the annotation to resume"}},
		{"unknown cluster in the suspension list",
			Input{Template: template(nil), Policy: policy(nil), Suspension: onClusters("membr3"), KnownClusters: []string{"member1", "member3"}},
			[]string{"spec.suspension.dispatchingOnClusters.clusterNames of PropagationPolicy shop/web names \"membr3\", which is no registered Cluster; every cluster is held until the name is fixed or such a cluster joins"}},
		{"unknown cluster in a per-cluster annotation",
			Input{Template: template(map[string]string{"suspended.propagation.federator.dev/membr3": "x"}), Policy: policy(nil),
				KnownClusters: []string{"member1", "member3"}},
			[]string{"annotation suspended.propagation.federator.dev/membr3 on Deployment shop/web names \"membr3\", which is no registered Cluster; every cluster is held until the annotation names a registered Cluster or is removed"}},
		{"closed gate",
			Input{Template: template(nil), Policy: policy(nil), PolicyGates: []Gate{closedGate}},
			[]string{"waiting approval, gate 'ops/sre-approval' is closed (Gate closed by default; listed by PropagationPolicy shop/web)"}},
		{"closed gates of the template and the policy, the template's first",
			Input{Template: template(nil), Policy: policy(nil), TemplateGates: []Gate{templateGate}, PolicyGates: []Gate{closedGate}},
			[]string{"waiting approval, gate 'shop/approval' is closed (Gate closed by default; listed by Deployment shop/web); " +
				"waiting approval, gate 'ops/sre-approval' is closed (Gate closed by default; listed by PropagationPolicy shop/web)"}},
		{"missing gate",
			Input{Template: template(nil), Policy: policy(nil), PolicyGates: []Gate{{Ref: "ops/typo", ListedBy: "PropagationPolicy shop/web"}}},
			[]string{"gate 'ops/typo' does not exist (listed by PropagationPolicy shop/web); create it, or remove it from annotation gating.federator.dev/gates"}},
		{"rollout stage",
			Input{Template: template(nil), Policy: policy(nil), Rollout: &Rollout{Name: "Rollout shop/web",
				Waiting: map[string]string{"member1": "stage 'rest' waits for stage 'canary' to be healthy"}}},
			[]string{"held by Rollout shop/web: stage 'rest' waits for stage 'canary' to be healthy", "federator rollout status"}},
		{"dispatching",
			Input{Template: template(nil), Policy: policy(nil), Suspension: all(true)},
			[]string{"spec.suspension.dispatching of PropagationPolicy shop/web", "set it to false"}},
		{"dispatchingOnClusters",
			Input{Template: template(nil), Policy: Object{Kind: "ClusterPropagationPolicy", Name: "all"}, Suspension: onClusters("member1")},
			[]string{"dispatchingOnClusters.clusterNames of ClusterPropagationPolicy all", "remove member1 from it"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := Decide(tc.in, []string{"member1"}, Checks)["member1"].Message()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestSummaryAndNotes(t *testing.T) {
	held := Decision{Holds: []Hold{{Note: "incident 1"}}}
	alsoHeld := Decision{Holds: []Hold{{Note: "incident 1"}, {Note: "freeze"}}}
	cases := []struct {
		name      string
		decisions map[string]Decision
		summary   string
		notes     []string
	}{
		{"none held", map[string]Decision{"a": {}, "b": {}}, "", nil},
		{"no clusters", map[string]Decision{}, "", nil},
		{"all held", map[string]Decision{"a": held, "b": alsoHeld}, "every cluster", []string{"incident 1", "freeze"}},
		{"some held, listed sorted", map[string]Decision{"c": held, "a": held, "b": {}}, "clusters a, c", []string{"incident 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summary(tc.decisions); got != tc.summary {
				t.Errorf("Summary = %q, want %q", got, tc.summary)
			}
			if got := Notes(tc.decisions); !reflect.DeepEqual(got, tc.notes) {
				t.Errorf("Notes = %q, want %q", got, tc.notes)
			}
		})
	}
}

func TestParseGates(t *testing.T) {
	cases := []struct {
		value, namespace string
		want             []Gate
	}{
		{"", "shop", nil},
		{"approval", "shop", []Gate{{Ref: "shop/approval", ListedBy: "x"}}},
		{" ops/approval , window ", "shop", []Gate{{Ref: "ops/approval", ListedBy: "x"}, {Ref: "shop/window", ListedBy: "x"}}},
		{"approval", "", []Gate{{Ref: "approval", ListedBy: "x",
			Problem: "gate 'approval' in annotation gating.federator.dev/gates needs a namespace: write namespace/approval"}}},
		{"a/b/c,/x", "shop", []Gate{
			{Ref: "a/b/c", ListedBy: "x", Problem: "gate 'a/b/c' in annotation gating.federator.dev/gates is not name or namespace/name"},
			{Ref: "/x", ListedBy: "x", Problem: "gate '/x' in annotation gating.federator.dev/gates is not name or namespace/name"}}},
		{"Approval", "shop", []Gate{{Ref: "shop/Approval", ListedBy: "x", Problem: "gate 'Approval' in annotation gating.federator.dev/gates " +
			"cannot name a Gate: write namespace/name in lowercase letters, digits, '-' and '.' (e.g. ops/approval)"}}},
	}
	for _, tc := range cases {
		if got := ParseGates(tc.value, tc.namespace, "x"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseGates(%q, %q) = %+v, want %+v", tc.value, tc.namespace, got, tc.want)
		}
	}
}

// The gates that hold are listed apart from the message, for metrics and
// tools: closed and missing ones, each once, never an open one or an
// unreadable reference.
func TestDecisionListsTheGatesThatHold(t *testing.T) {
	open := Gate{Ref: "ops/window", ListedBy: "PropagationPolicy shop/web", Found: true, Opened: true}
	missing := Gate{Ref: "ops/typo", ListedBy: "PropagationPolicy shop/web"}
	unreadable := Gate{Ref: "bare", ListedBy: "Cluster member1", Problem: "gate 'bare' needs a namespace"}
	for _, tc := range []struct {
		name string
		in   Input
		want []string
	}{
		{"no gate", Input{Template: template(nil), Policy: policy(nil), Suspension: all(true)}, nil},
		{"an open gate", Input{Template: template(nil), Policy: policy(nil), PolicyGates: []Gate{open}}, nil},
		{"a template's closed gate beside the policy's",
			Input{Template: template(nil), Policy: policy(nil), TemplateGates: []Gate{templateGate, open}, PolicyGates: []Gate{closedGate}},
			[]string{"ops/sre-approval", "shop/approval"}},
		{"closed, missing and open gates, the closed one listed twice",
			Input{Template: template(nil), Policy: policy(nil), PolicyGates: []Gate{closedGate, missing, open},
				ClusterGates: map[string][]Gate{"member1": {closedGate, unreadable}}},
			[]string{"ops/sre-approval", "ops/typo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.in, []string{"member1"}, Checks)["member1"].Gates(); !slices.Equal(got, tc.want) {
				t.Errorf("Gates() = %v, want %v", got, tc.want)
			}
		})
	}
}
