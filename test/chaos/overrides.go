package main

import (
	"context"
	"encoding/json"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// Edits mid-rollout: an OverridePolicy over the two Deployments adds a tag
// suffix to their image on the members whose Cluster carries
// overrideLabel; the run applies it with a new suffix, deletes it, and
// labels and unlabels members, while the Rollout walks. What a member
// gets is then its own: the template's version with the suffix where the
// override applies (versionFor), and a Rollout's revision is what each
// cluster gets (docs/rollouts.md), so each edit walks through the stages.

// overrideLabel is the Cluster label the OverridePolicy's rule targets.
const overrideLabel = "chaos.federator.dev/override"

// overridden are the templates the OverridePolicy selects.
var overridden = map[string]bool{"web-a": true, "web-b": true}

// rendered is what s's OverridePolicy makes of template's version for
// member: the version, with the suffix when the override applies there.
func (s state) rendered(template, member string) string {
	v := s.Templates[template].Version
	if s.Override != "" && overridden[template] && s.Labeled[member] {
		v += s.Override
	}
	return v
}

// versionFor is the version s sends member of template: rendered, or,
// while the policy is deleted, what its Works kept (Frozen).
func (s state) versionFor(template, member string) string {
	if !s.PolicyExists && s.Frozen != nil {
		return s.Frozen.rendered(template, member)
	}
	return s.rendered(template, member)
}

// overridePolicy is the OverridePolicy that adds suffix to the
// Deployments' image tag on the labelled members.
func overridePolicy(suffix string) *policyv1alpha1.OverridePolicy {
	return &policyv1alpha1.OverridePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "OverridePolicy"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: policyName},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "web-a"},
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "web-b"},
			},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{overrideLabel: "on"}}},
				Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
					Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpAdd, Value: suffix}}},
			}},
		},
	}
}

// writeOverride sends an opOverride or an opRelabel as next has it: the
// OverridePolicy applied (server-side, as kubectl apply --server-side
// does) or deleted; the label set on the member's Cluster or removed.
func writeOverride(ctx context.Context, hub client.Client, o op, next state) error {
	if o.Kind == opRelabel {
		var v any
		if next.Labeled[o.Member] {
			v = "on"
		}
		raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{overrideLabel: v}}})
		return hub.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: o.Member}}, client.RawPatch(types.MergePatchType, raw))
	}
	if next.Override == "" {
		return client.IgnoreNotFound(hub.Delete(ctx, overridePolicy("")))
	}
	return framework.Apply(ctx, hub, overridePolicy(next.Override), "chaos")
}
