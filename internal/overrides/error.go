package overrides

import (
	"context"
	"errors"
	"fmt"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	karmadautil "github.com/karmada-io/karmada/pkg/util"
	"github.com/karmada-io/karmada/pkg/util/overridemanager"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// Error is an override policy that cannot be applied to one
// cluster's manifest: bad input (a JSON patch to a missing path, an image
// predicate path the kind does not have, a field that is not the JSON or
// YAML its fieldOverrider edits). The cluster's Work keeps the last
// manifest that could be built.
type Error struct {
	Policy policyRef
	// Rule is where in the policy the failing overriders are:
	// "spec.overrideRules[1]", or "spec.overriders" for a policy written
	// in the deprecated form without rules.
	Rule string
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s cannot be applied: %v", e.Policy, e.Rule, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// policyRef names an OverridePolicy or ClusterOverridePolicy.
type policyRef struct{ Kind, Namespace, Name string }

func (p policyRef) String() string {
	if p.Namespace == "" {
		return p.Kind + " " + p.Name
	}
	return p.Kind + " " + p.Namespace + "/" + p.Name
}

// failingRule finds which rule of the failing policy Karmada's manager
// stopped at, by replaying it from original with the policy's rules cut
// after the first, the second, ... until the same policy fails again.
// Karmada applies a policy's matching rules in order, so the first cut
// that fails ends at the culprit.
func failingRule(c client.Client, original *unstructured.Unstructured, cluster string, p *policyRef, err error) error {
	oe := &Error{Policy: *p, Rule: "spec.overriders", Err: err}
	var spec policyv1alpha1.OverrideSpec
	key := client.ObjectKey{Namespace: p.Namespace, Name: p.Name}
	if p.Namespace == "" {
		cop := &policyv1alpha1.ClusterOverridePolicy{}
		if c.Get(context.TODO(), key, cop) != nil {
			return oe
		}
		spec = cop.Spec
	} else {
		op := &policyv1alpha1.OverridePolicy{}
		if c.Get(context.TODO(), key, op) != nil {
			return oe
		}
		spec = op.Spec
	}
	for i := range spec.OverrideRules {
		replay := &overrideFailure{}
		cut := rulesCut{Client: c, policy: *p, rules: spec.OverrideRules[:i+1]}
		_, _, replayErr := overridemanager.New(cut, replay).ApplyOverridePolicies(original.DeepCopy(), cluster)
		if replayErr != nil && replay.policy != nil && *replay.policy == *p {
			oe.Rule, oe.Err = fmt.Sprintf("spec.overrideRules[%d]", i), replayErr
			return oe
		}
	}
	return oe
}

// rulesCut reads the hub as c does, except that one policy has only the
// given rules.
type rulesCut struct {
	client.Client
	policy policyRef
	rules  []policyv1alpha1.RuleWithCluster
}

func (c rulesCut) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	// The items are the list's own copies of the cached structs, so
	// replacing a field of one leaves the cache as it is.
	switch l := list.(type) {
	case *policyv1alpha1.ClusterOverridePolicyList:
		for i := range l.Items {
			if c.policy.Namespace == "" && l.Items[i].Name == c.policy.Name {
				l.Items[i].Spec.OverrideRules = c.rules
			}
		}
	case *policyv1alpha1.OverridePolicyList:
		for i := range l.Items {
			if l.Items[i].Namespace == c.policy.Namespace && l.Items[i].Name == c.policy.Name {
				l.Items[i].Spec.OverrideRules = c.rules
			}
		}
	}
	return nil
}

// LastGood is what a cluster's Work carries when its manifest cannot be
// built because an override policy does not apply (bad input): the last
// manifest and record of applied overrides it carries, so the member keeps
// its last good version, plus the annotation that says which policy and
// rule failed and why. Nil when the failure is of another kind or there is
// no last manifest: then the Work is left as it is, or not written.
func LastGood(w *workv1alpha1.Work, err error) (*unstructured.Unstructured, map[string]string) {
	var bad *Error
	if !errors.As(err, &bad) || w == nil {
		return nil, nil
	}
	manifest := workkeys.FirstManifest(w)
	if manifest == nil {
		return nil, nil
	}
	annotations := map[string]string{workkeys.OverrideFailedAnnotation: bad.Error()}
	for _, k := range []string{karmadautil.AppliedOverrides, karmadautil.AppliedClusterOverrides} {
		if v, ok := w.Annotations[k]; ok {
			annotations[k] = v
		}
	}
	return manifest, annotations
}
