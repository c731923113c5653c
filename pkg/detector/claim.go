package detector

import (
	"fmt"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// Karmada's claim metadata: which policy a template belongs to, recorded on
// the template itself (pkg/detector/claim.go).
var (
	ppClaimLabels       = []string{policyv1alpha1.PropagationPolicyPermanentIDLabel}
	ppClaimAnnotations  = []string{policyv1alpha1.PropagationPolicyNamespaceAnnotation, policyv1alpha1.PropagationPolicyNameAnnotation}
	cppClaimLabels      = []string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel}
	cppClaimAnnotations = []string{policyv1alpha1.ClusterPropagationPolicyAnnotation}
)

// Resolve decides which policy claims template, keeping Karmada's sticky
// claims: a template already claimed stays with its policy while that policy
// exists, is not being deleted and still selects it, even if a policy with
// higher precedence appears, unless a policy preempts it (Preempt).
// Otherwise Match decides afresh.
func Resolve(template *unstructured.Unstructured, pps []policyv1alpha1.PropagationPolicy, cpps []policyv1alpha1.ClusterPropagationPolicy) (Claim, bool) {
	if template == nil || Skipped(template) {
		return Claim{}, false
	}
	if claimed, ok := stickyClaim(template, pps, cpps); ok {
		return Preempt(template, claimed, pps, cpps), true
	}
	return Match(template, pps, cpps)
}

// stickyClaim is the claim template records, while its policy exists, is
// not being deleted and still selects it.
func stickyClaim(template *unstructured.Unstructured, pps []policyv1alpha1.PropagationPolicy, cpps []policyv1alpha1.ClusterPropagationPolicy) (Claim, bool) {
	a := template.GetAnnotations()
	if name := a[policyv1alpha1.PropagationPolicyNameAnnotation]; name != "" {
		ns := a[policyv1alpha1.PropagationPolicyNamespaceAnnotation]
		for i := range pps {
			p := &pps[i]
			if p.Name == name && p.Namespace == ns && ns == template.GetNamespace() && p.DeletionTimestamp.IsZero() &&
				SelectorsMatch(template, p.Spec.ResourceSelectors) {
				return Claim{PropagationPolicy: p}, true
			}
		}
	}
	if name := a[policyv1alpha1.ClusterPropagationPolicyAnnotation]; name != "" {
		for i := range cpps {
			p := &cpps[i]
			if p.Name == name && p.DeletionTimestamp.IsZero() && SelectorsMatch(template, p.Spec.ResourceSelectors) {
				return Claim{ClusterPropagationPolicy: p}, true
			}
		}
	}
	return Claim{}, false
}

// Preempt is Karmada's policy preemption (pkg/detector/preemption.go, the
// PolicyPreemption feature, on here): a policy with `preemption: Always`
// takes template from the policy that claims it when
//   - both are PropagationPolicies, or both ClusterPropagationPolicies, and
//     its explicit priority is higher;
//   - it is a PropagationPolicy and the claim is a ClusterPropagationPolicy's
//     (whatever the priorities).
//
// A ClusterPropagationPolicy never preempts a PropagationPolicy. As in
// Karmada, only a resource selector that names the template preempts (Karmada
// fetches the templates to preempt by the selectors' names). Among several
// preemptors Match's precedence decides; without one the claim stays.
// Priorities strictly order each step, so claims never go round in a circle.
func Preempt(template *unstructured.Unstructured, claimed Claim, pps []policyv1alpha1.PropagationPolicy, cpps []policyv1alpha1.ClusterPropagationPolicy) Claim {
	t := targetOf(template)
	preempts := func(spec *policyv1alpha1.PropagationSpec) bool {
		if spec.Preemption != policyv1alpha1.PreemptAlways {
			return false
		}
		for _, rs := range spec.ResourceSelectors {
			if rs.Name != "" && selectorPriority(t, rs) > priorityMisMatch {
				return true
			}
		}
		return false
	}
	var byPP []policyv1alpha1.PropagationPolicy
	var byCPP []policyv1alpha1.ClusterPropagationPolicy
	for i := range pps {
		p := &pps[i]
		if p.Namespace != template.GetNamespace() || !p.DeletionTimestamp.IsZero() || !preempts(&p.Spec) {
			continue
		}
		if claimed.ClusterPropagationPolicy != nil ||
			claimed.PropagationPolicy != nil && p.Name != claimed.PropagationPolicy.Name && p.ExplicitPriority() > claimed.PropagationPolicy.ExplicitPriority() {
			byPP = append(byPP, *p)
		}
	}
	if c := claimed.ClusterPropagationPolicy; c != nil {
		for i := range cpps {
			p := &cpps[i]
			if p.DeletionTimestamp.IsZero() && p.Name != c.Name && preempts(&p.Spec) && p.ExplicitPriority() > c.ExplicitPriority() {
				byCPP = append(byCPP, *p)
			}
		}
	}
	if len(byPP) == 0 && len(byCPP) == 0 {
		return claimed
	}
	if winner, ok := Match(template, byPP, byCPP); ok {
		return winner
	}
	return claimed
}

// PreemptedMessage is Karmada's message for claim taking the template
// from held: PreemptPolicySucceed's, or with err PreemptPolicyFailed's.
func PreemptedMessage(claim, held Claim, err error) string {
	var taker, taken string
	switch {
	case claim.PropagationPolicy != nil && held.PropagationPolicy != nil:
		taker, taken = "Propagation policy", "propagation policy"
	case claim.PropagationPolicy != nil:
		taker, taken = "Propagation policy", "cluster propagation policy"
	default:
		taker, taken = "Cluster propagation policy", "cluster propagation policy"
	}
	if err != nil {
		return fmt.Sprintf("%s(%s) failed to preempt %s(%s): %v", taker, claim.Key(), taken, held.Key(), err)
	}
	return fmt.Sprintf("%s(%s) preempted %s(%s) successfully", taker, claim.Key(), taken, held.Key())
}

// PermanentID is the claiming policy's permanent ID (policykeys.PermanentID).
func (c Claim) PermanentID() string {
	switch {
	case c.PropagationPolicy != nil:
		return policykeys.PermanentID(c.PropagationPolicy)
	case c.ClusterPropagationPolicy != nil:
		return policykeys.PermanentID(c.ClusterPropagationPolicy)
	}
	return ""
}

// ClaimMetadata returns template's labels and annotations with the claim
// recorded as Karmada records it (any other claim removed; ok=false claims
// nothing), and whether they differ from what template carries.
func ClaimMetadata(template *unstructured.Unstructured, claim Claim, ok bool) (labels, annotations map[string]string, changed bool) {
	labels, annotations = copyMap(template.GetLabels()), copyMap(template.GetAnnotations())
	for _, k := range append(ppClaimLabels, cppClaimLabels...) {
		delete(labels, k)
	}
	for _, k := range append(ppClaimAnnotations, cppClaimAnnotations...) {
		delete(annotations, k)
	}
	switch {
	case ok && claim.PropagationPolicy != nil:
		labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = claim.PermanentID()
		annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation] = claim.PropagationPolicy.Namespace
		annotations[policyv1alpha1.PropagationPolicyNameAnnotation] = claim.PropagationPolicy.Name
	case ok && claim.ClusterPropagationPolicy != nil:
		labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] = claim.PermanentID()
		annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] = claim.ClusterPropagationPolicy.Name
	}
	changed = !equalMaps(labels, template.GetLabels()) || !equalMaps(annotations, template.GetAnnotations())
	return labels, annotations, changed
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+3)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
