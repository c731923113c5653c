package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/pkg/hold"
)

// What still holds after a resume, as pkg/hold decides it.

// holdCase is one template's holds, as pkg/hold decides them from what
// the hub stores now, and the clusters it places the template on.
type holdCase struct {
	in      hold.Input
	targets []string
}

// holdCases are the holdCases of obj: the template itself, or every
// template the policy obj propagates.
func holdCases(ctx context.Context, h *hub, k kind, obj *unstructured.Unstructured) ([]holdCase, error) {
	self := hold.Object{Kind: k.gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Annotations: obj.GetAnnotations()}
	// So a name no registered Cluster has (a typo) is said to hold, as it does.
	known, err := clusterNames(ctx, h)
	if err != nil {
		return nil, err
	}
	if !k.isPolicy() {
		b, found, err := templateBinding(ctx, h.client, k, obj.GetNamespace(), obj.GetName())
		if err != nil || !found {
			return nil, h.explain(err, "get", ref{kind: "ResourceBinding", resource: "resourcebindings.work.karmada.io"})
		}
		in := hold.Input{Template: self, KnownClusters: known}
		if b.spec.Suspension != nil {
			in.Suspension = &b.spec.Suspension.Suspension
		}
		if p := b.policy(); p.kind != "" {
			policy, err := getObject(ctx, h.client, policyv1alpha1.SchemeGroupVersion.WithKind(p.kind), p.namespace, p.name)
			switch {
			case err == nil:
				in.Policy = hold.Object{Kind: p.kind, Namespace: p.namespace, Name: p.name, Annotations: policy.GetAnnotations()}
			case client.IgnoreNotFound(err) != nil:
				return nil, h.explain(err, "get", p)
			}
		}
		return []holdCase{{in: in, targets: b.targets()}}, nil
	}
	spec, err := policykeys.StoredSpec(obj)
	if err != nil {
		return nil, err
	}
	bindings, err := policyBindings(ctx, h.client, k.ref(obj.GetNamespace(), obj.GetName()))
	if err != nil {
		return nil, h.explain(err, "list", ref{kind: "ResourceBindings", resource: "resourcebindings.work.karmada.io"})
	}
	var cases []holdCase
	for _, b := range bindings {
		t := b.template()
		tpl, err := getObject(ctx, h.client, b.templateGVK(), t.namespace, t.name)
		if client.IgnoreNotFound(err) != nil {
			return nil, h.explain(err, "get", t)
		}
		in := hold.Input{Policy: self, Suspension: spec.Suspension, KnownClusters: known}
		if err == nil {
			in.Template = hold.Object{Kind: t.kind, Namespace: t.namespace, Name: t.name, Annotations: tpl.GetAnnotations()}
		}
		cases = append(cases, holdCase{in: in, targets: b.targets()})
	}
	return cases, nil
}

// stillHeld says what holds clusters (all targets when none are named)
// after a resume: one line per distinct holder with the clusters it holds.
// It returns the clusters it looked at too.
func stillHeld(cases []holdCase, clusters []string) (lines, looked []string) {
	var messages []string
	heldOn := map[string][]string{}
	for _, c := range cases {
		targets := c.targets
		if len(clusters) > 0 {
			targets = slices.DeleteFunc(slices.Clone(targets), func(t string) bool { return !slices.Contains(clusters, t) })
		}
		decisions := hold.Decide(c.in, targets, hold.Checks)
		for _, cluster := range targets {
			if !slices.Contains(looked, cluster) {
				looked = append(looked, cluster)
			}
			for _, h := range decisions[cluster].Holds {
				if _, seen := heldOn[h.Message]; !seen {
					messages = append(messages, h.Message)
				}
				if !slices.Contains(heldOn[h.Message], cluster) {
					heldOn[h.Message] = append(heldOn[h.Message], cluster)
				}
			}
		}
	}
	slices.Sort(looked)
	for _, m := range messages {
		slices.Sort(heldOn[m])
		where := strings.Join(heldOn[m], ", ")
		if len(heldOn[m]) == len(looked) && len(looked) > 1 {
			where = "every cluster (" + where + ")"
		}
		lines = append(lines, fmt.Sprintf("still held on %s: %s", where, m))
	}
	return lines, looked
}
