// Package detector owns which PropagationPolicy or ClusterPropagationPolicy
// claims which resource template.
//
// This file holds the pure decision, with no API calls: given a template and
// the policies that exist, which one claims it. It mirrors Karmada v1.16's
// detector (pkg/detector: LookForMatchedPolicy, LookForMatchedClusterPolicy,
// getHighestPriority(Cluster)PropagationPolicy, EventFilter, gvrDisabled) and
// its selector matching (pkg/util/selector.go), which cannot be imported
// directly: Karmada's pkg/util pulls in k8s.io/apiserver.
//
// Match gives the answer for a template that is not yet claimed. Like
// Karmada, a controller keeps an existing claim (recorded on the template by
// the policy's annotations and permanent-ID label) for as long as that policy
// exists, is not being deleted and still selects the template (SelectorsMatch);
// Match alone does not make claims sticky.
package detector

import (
	"math"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
)

// Claim is the policy that claims a template.
type Claim struct {
	// Exactly one of these is set.
	PropagationPolicy        *policyv1alpha1.PropagationPolicy
	ClusterPropagationPolicy *policyv1alpha1.ClusterPropagationPolicy
}

// Spec returns the claiming policy's spec, or nil for an empty Claim.
func (c Claim) Spec() *policyv1alpha1.PropagationSpec {
	switch {
	case c.PropagationPolicy != nil:
		return &c.PropagationPolicy.Spec
	case c.ClusterPropagationPolicy != nil:
		return &c.ClusterPropagationPolicy.Spec
	}
	return nil
}

// Key returns "namespace/name" for a PropagationPolicy, "name" for a
// ClusterPropagationPolicy, and "" for an empty Claim.
func (c Claim) Key() string {
	switch {
	case c.PropagationPolicy != nil:
		return names.NamespacedKey(c.PropagationPolicy.Namespace, c.PropagationPolicy.Name)
	case c.ClusterPropagationPolicy != nil:
		return c.ClusterPropagationPolicy.Name
	}
	return ""
}

// Match returns the policy that claims template, or ok=false when none does.
// pps are PropagationPolicies (any namespace; only the template's namespace counts), cpps ClusterPropagationPolicies.
//
// As in Karmada:
//   - A template that Skipped reports is claimed by no policy.
//   - A namespaced template is matched against the PropagationPolicies of its
//     own namespace first, and against ClusterPropagationPolicies only when
//     none of those selects it. A cluster-scoped template is matched against
//     ClusterPropagationPolicies only.
//   - Policies being deleted (DeletionTimestamp set) claim nothing.
//   - Among the policies of one kind that select the template, the winner has
//     the highest spec.priority (unset is 0); on a tie, the best selector match
//     (name, then labelSelector, then kind only; the best of a policy's
//     selectors counts); on a further tie, the alphabetically smallest name.
//
// The returned Claim points into pps or cpps; it is not a copy.
func Match(template *unstructured.Unstructured, pps []policyv1alpha1.PropagationPolicy, cpps []policyv1alpha1.ClusterPropagationPolicy) (Claim, bool) {
	if template == nil || Skipped(template) {
		return Claim{}, false
	}

	t := targetOf(template)
	// Karmada's LookForMatchedPolicy: only PropagationPolicies listed from
	// the template's namespace, none for a cluster-scoped template.
	if ns := t.namespace; ns != "" {
		i := highestPriority(t, len(pps), func(i int) (string, *policyv1alpha1.PropagationSpec, bool) {
			p := &pps[i]
			return p.Name, &p.Spec, p.Namespace == ns && p.DeletionTimestamp.IsZero()
		})
		if i >= 0 {
			return Claim{PropagationPolicy: &pps[i]}, true
		}
	}

	// Karmada's LookForMatchedClusterPolicy.
	i := highestPriority(t, len(cpps), func(i int) (string, *policyv1alpha1.PropagationSpec, bool) {
		p := &cpps[i]
		return p.Name, &p.Spec, p.DeletionTimestamp.IsZero()
	})
	if i >= 0 {
		return Claim{ClusterPropagationPolicy: &cpps[i]}, true
	}
	return Claim{}, false
}

// highestPriority is Karmada's getHighestPriorityPropagationPolicy and
// getHighestPriorityClusterPropagationPolicy (pkg/detector/compare.go),
// ported step by step. policy(i) returns the i-th policy's name and spec, and
// whether it takes part at all. It returns the index of the winner, or -1.
func highestPriority(t target, n int, policy func(i int) (string, *policyv1alpha1.PropagationSpec, bool)) int {
	matchedImplicit := priorityMisMatch
	matchedExplicit := int32(math.MinInt32)
	matched, matchedName := -1, ""

	for i := 0; i < n; i++ {
		name, spec, ok := policy(i)
		if !ok {
			continue
		}
		implicit := selectorsPriority(t, spec.ResourceSelectors)
		if implicit <= priorityMisMatch {
			continue
		}
		explicit := spec.ExplicitPriority()

		if matchedExplicit < explicit {
			matchedImplicit, matchedExplicit = implicit, explicit
			matched, matchedName = i, name
			continue
		}
		if matchedExplicit == explicit {
			if implicit > matchedImplicit {
				matchedImplicit = implicit
				matched, matchedName = i, name
			} else if implicit == matchedImplicit && !(matchedName < name) {
				// getHigherPriority(Cluster)PropagationPolicy(a, b):
				// a if a.Name < b.Name, otherwise b.
				matched, matchedName = i, name
			}
		}
	}
	return matched
}

// implicitPriority is Karmada's util.ImplicitPriority: how well a resource
// selector matches a resource.
type implicitPriority int

const (
	priorityMisMatch implicitPriority = iota
	priorityMatchAll
	priorityMatchLabelSelector
	priorityMatchName
)

// target is what selectors look at in a template, read once per decision:
// unstructured getters walk maps, and GetLabels copies the labels.
type target struct {
	apiVersion, kind, namespace, name string
	labels                            labels.Set
}

func targetOf(template *unstructured.Unstructured) target {
	return target{apiVersion: template.GetAPIVersion(), kind: template.GetKind(),
		namespace: template.GetNamespace(), name: template.GetName(), labels: template.GetLabels()}
}

// selectorPriority is Karmada's util.ResourceSelectorPriority.
func selectorPriority(t target, rs policyv1alpha1.ResourceSelector) implicitPriority {
	if t.apiVersion != rs.APIVersion ||
		t.kind != rs.Kind ||
		(len(rs.Namespace) > 0 && t.namespace != rs.Namespace) {
		return priorityMisMatch
	}

	// A name, when set, decides alone; the labelSelector is then ignored.
	if len(rs.Name) > 0 {
		if rs.Name == t.name {
			return priorityMatchName
		}
		return priorityMisMatch
	}

	if rs.LabelSelector == nil {
		return priorityMatchAll
	}
	if labelSelectorMatches(rs.LabelSelector, t.labels) {
		return priorityMatchLabelSelector
	}
	return priorityMisMatch
}

// labelSelectorMatches is metav1.LabelSelectorAsSelector(s).Matches(set),
// with an invalid selector matching nothing (Karmada's webhook rejects
// invalid selectors; one that got through anyway matches nothing). A
// selector of matchLabels only, the common case, is compared directly: a
// stored object's labels are valid, so an invalid key or value in
// matchLabels cannot equal one of them, and the answer is the same without
// parsing and validating the selector on every call.
func labelSelectorMatches(s *metav1.LabelSelector, set labels.Set) bool {
	if len(s.MatchExpressions) == 0 {
		for k, v := range s.MatchLabels {
			if have, ok := set[k]; !ok || have != v {
				return false
			}
		}
		return true
	}
	selector, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return false
	}
	return selector.Matches(set)
}

// selectorsPriority is Karmada's util.ResourceMatchSelectorsPriority: the
// best priority among selectors.
func selectorsPriority(t target, selectors []policyv1alpha1.ResourceSelector) implicitPriority {
	var best implicitPriority
	for _, rs := range selectors {
		if p := selectorPriority(t, rs); p > best {
			best = p
		}
	}
	return best
}

// SelectorsMatch reports whether any of selectors selects template
// (Karmada's util.ResourceMatchSelectors). A controller uses it to check that
// the policy already claiming a template still selects it: Karmada leaves a
// claimed template alone when its policy no longer selects it.
func SelectorsMatch(template *unstructured.Unstructured, selectors []policyv1alpha1.ResourceSelector) bool {
	return selectorsPriority(targetOf(template), selectors) > priorityMisMatch
}

// SelectorsReferenceGVK reports whether any of selectors names this
// apiVersion and kind, i.e. whether templates of that kind may be claimed
// through them. Selectors compare apiVersion as a string, so apps/v1 and
// apps/v1beta1 are different kinds here, as they are in Karmada.
func SelectorsReferenceGVK(selectors []policyv1alpha1.ResourceSelector, gvk schema.GroupVersionKind) bool {
	apiVersion := gvk.GroupVersion().String()
	for _, rs := range selectors {
		if rs.APIVersion == apiVersion && rs.Kind == gvk.Kind {
			return true
		}
	}
	return false
}

// ResourceTemplateClaimedByLabel marks a template that something other than a
// propagation policy propagates (for example a MultiClusterService claims its
// Service); such a template is never claimed by a policy. The value is
// Karmada's util.ResourceTemplateClaimedByLabel.
const ResourceTemplateClaimedByLabel = "resourcetemplate.karmada.io/claimed-by"

// skippedNamespaces is the default of karmada-controller-manager's
// --skipped-propagating-namespaces ("kube-.*"), anchored as Karmada anchors it.
var skippedNamespaces = []*regexp.Regexp{regexp.MustCompile("^kube-.*$")}

// skippedGroups, skippedGroupVersions and skippedGVKs are Karmada's
// util.NewSkippedResourceConfig defaults (the --skipped-propagating-apis
// list that always applies).
var (
	skippedGroups = map[string]bool{
		"cluster.karmada.io":     true,
		"policy.karmada.io":      true,
		"work.karmada.io":        true,
		"config.karmada.io":      true,
		"networking.karmada.io":  true,
		"autoscaling.karmada.io": true,
		"remedy.karmada.io":      true,
		"apps.karmada.io":        true,
		"events.k8s.io":          true,
	}
	skippedGroupVersions = map[schema.GroupVersion]bool{
		{Group: "coordination.k8s.io", Version: "v1"}: true, // Lease
	}
	skippedGVKs = map[schema.GroupVersionKind]bool{
		{Group: "", Version: "v1", Kind: "Event"}: true,
	}
)

// Skipped reports whether Karmada never propagates template, whatever the
// policies say. These are Karmada's rules with karmada-controller-manager's
// default flags:
//   - its namespace is reserved: karmada-system, karmada-cluster or
//     karmada-es-* (names.IsReservedNamespace);
//   - its namespace matches --skipped-propagating-namespaces, by default
//     kube-.* (kube-system, kube-public, kube-node-lease, ...);
//   - it is the ConfigMap kube-system/extension-apiserver-authentication,
//     which kube-apiserver generates;
//   - its kind is skipped (SkippedGVK): Karmada's own API groups, Events,
//     Leases;
//   - it carries ResourceTemplateClaimedByLabel, so something else propagates
//     it.
//
// Only a template's own namespace counts: a cluster-scoped Namespace object
// named kube-system is not skipped.
func Skipped(template *unstructured.Unstructured) bool {
	ns := template.GetNamespace()
	if SkippedNamespace(ns) {
		return true
	}
	if ns == "kube-system" && template.GetKind() == "ConfigMap" &&
		template.GetName() == "extension-apiserver-authentication" {
		return true
	}
	if SkippedGVK(template.GroupVersionKind()) {
		return true
	}
	return template.GetLabels()[ResourceTemplateClaimedByLabel] != ""
}

// SkippedNamespace reports whether Karmada skips every template in namespace
// ns: reserved namespaces and, by default, kube-*. "" (cluster scope) is
// never skipped.
func SkippedNamespace(ns string) bool {
	if ns == "" {
		return false
	}
	if names.IsReservedNamespace(ns) {
		return true
	}
	for _, re := range skippedNamespaces {
		if re.MatchString(ns) {
			return true
		}
	}
	return false
}

// SkippedGVK reports whether Karmada skips every template of this kind; its
// detector does not even watch such kinds. These are Karmada's default
// skipped APIs: the karmada.io groups, Events (core and events.k8s.io) and
// coordination.k8s.io/v1 (Leases).
func SkippedGVK(gvk schema.GroupVersionKind) bool {
	return skippedGroups[gvk.Group] ||
		skippedGroupVersions[gvk.GroupVersion()] ||
		skippedGVKs[gvk]
}
