package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/pkg/gatestate"
	"github.com/federator-dev/federator/pkg/hold"
)

var gateRef = ref{kind: "Gate", resource: "gates.gating.federator.dev"}

// newGateCommand is `gate open|close NAME [--for DURATION]`: it writes the
// request annotation, so RBAC on the Gate governs who may, and the gate
// controller does the rest.
func newGateCommand(connect connector) *cobra.Command {
	gate := &cobra.Command{
		Use:   "gate open|close NAME [-n NAMESPACE] [--for DURATION]",
		Short: "Open or close a Gate (gating.federator.dev) by request",
		Long: `Open or close a Gate by writing its request annotation
(open.gate.federator.dev/requestedAt or close.gate.federator.dev/requestedAt)
with the time now by the hub's clock (the Date of its answer; this machine's
clock does not count). A new request replaces the previous one: the opposite
request is removed in the same write, so the request in force is the one the
hub stored last. With --for, the opposite request is written instead, timed
that long from now, so the gate flips back then (the gate's spec.window, if
shorter, ends the request first).`,
		Example: `  federator gate open sre-approval -n demo --for 1h
  federator gate close no-deploy -n ops`,
	}
	for _, action := range []string{gatingv1alpha1.ActionOpen, gatingv1alpha1.ActionClose} {
		var (
			conn connection
			dur  time.Duration
		)
		cmd := &cobra.Command{
			Use:   action + " NAME [-n NAMESPACE] [--for DURATION]",
			Short: strings.ToUpper(action[:1]) + action[1:] + " a Gate now, optionally for a while",
			Args:  exactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if dur < 0 {
					return fmt.Errorf("--for %s: a duration must be positive (e.g. 30m, 1h)", dur)
				}
				h, err := connect(conn)
				if err != nil {
					return err
				}
				msg, err := requestGate(cmd.Context(), h, args[0], action == gatingv1alpha1.ActionOpen, dur)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), msg)
				return nil
			},
		}
		conn.addFlags(cmd.Flags(), false)
		cmd.Flags().DurationVar(&dur, "for", 0, "flip the gate back after this long (e.g. 30m, 1h)")
		gate.AddCommand(cmd)
	}
	return gate
}

// requestGate writes an open or close request on the gate name, stamped
// with the hub's clock, and removes the opposite request or, with dur,
// writes it dur later: one write, locked to the Gate's resourceVersion, so
// the request left is the one the hub stored last, whatever the stamps.
func requestGate(ctx context.Context, h *hub, name string, open bool, dur time.Duration) (string, error) {
	r := gateRef
	r.namespace, r.name = h.namespace, name
	key, opposite, verb, back := gatingv1alpha1.OpenRequestAnnotation, gatingv1alpha1.CloseRequestAnnotation, "open", "closes"
	if !open {
		key, opposite, verb, back = gatingv1alpha1.CloseRequestAnnotation, gatingv1alpha1.OpenRequestAnnotation, "close", "opens"
	}
	var (
		msg, failed string
		stamped     time.Time
	)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		g := &gatingv1alpha1.Gate{}
		if err := h.client.Get(ctx, client.ObjectKey{Namespace: h.namespace, Name: name}, g); err != nil {
			failed = "get"
			return err
		}
		// The Date of the answer just read; this machine's clock may be
		// minutes off the hub's.
		now, ok := h.hubNow()
		if !ok {
			return errNoHubTime
		}
		now = now.UTC()
		stamped = now
		before := g.DeepCopy()
		if g.Annotations == nil {
			g.Annotations = map[string]string{}
		}
		g.Annotations[key] = now.Format(time.RFC3339Nano)
		msg = fmt.Sprintf("Gate %s/%s: %s requested at %s", g.Namespace, g.Name, verb, now.Format(time.RFC3339))
		switch {
		case dur > 0:
			until := now.Add(dur)
			g.Annotations[opposite] = until.Format(time.RFC3339Nano)
			msg += fmt.Sprintf("; it %s again at %s (--for %s)", back, until.Format(time.RFC3339), dur)
		default:
			// Read as the gate controllers read it, to tell a flip-back
			// still to come; any opposite request goes, so none can win
			// against this one by its stamp.
			if at, err := gatestate.RequestTime(opposite, g.Annotations[opposite]); err == nil && !at.Before(now) {
				msg += fmt.Sprintf("; the pending request to flip it back at %s is cancelled", at.UTC().Format(time.RFC3339))
			}
			delete(g.Annotations, opposite)
		}
		failed = "patch"
		return h.client.Patch(ctx, g, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
	switch {
	case errors.Is(err, errNoHubTime):
		return "", fmt.Errorf("%s: the hub at %s answered without a Date header, and gate requests are stamped with the hub's clock, not this machine's: reach the hub directly or through a proxy that keeps the header", r, h.host)
	case err != nil:
		return "", h.explain(err, failed, r)
	}
	msg += "; `federator get gates` shows its state once the gate controller has applied it"
	if skew := h.now().Sub(stamped).Round(time.Second); skew > time.Minute || skew < -time.Minute {
		msg += fmt.Sprintf(" (times are the hub's clock; this machine's is %s off)", skew)
	}
	return msg, nil
}

// errNoHubTime: no answer of the hub has said its time.
var errNoHubTime = errors.New("no Date header from the hub")

// gateListing is `get gates`: each gate's state, why, until when, its
// schedules, and what waits for it.
type gateListing struct {
	objects
	// waiters lists, per "namespace/name", what lists the gate.
	waiters map[string][]string
}

func listGates(ctx context.Context, h *hub, name string) (listing, error) {
	r := gateRef
	r.namespace = h.namespace
	found, err := getOrList(ctx, h, &gatingv1alpha1.Gate{}, &gatingv1alpha1.GateList{}, r, name)
	if err != nil {
		return nil, err
	}
	if name != "" && len(found) == 0 {
		return nil, namedNotFound(h, []string{"Gate"}, true, name)
	}
	waiters := map[string][]string{}
	add := func(annotations map[string]string, namespace, who string) {
		for _, g := range hold.ParseGates(annotations[gatingv1alpha1.GatesAnnotation], namespace, who) {
			if g.Problem == "" && !slices.Contains(waiters[g.Ref], who) {
				waiters[g.Ref] = append(waiters[g.Ref], who)
			}
		}
	}
	pps := &policyv1alpha1.PropagationPolicyList{}
	if err := h.client.List(ctx, pps); err != nil {
		return nil, h.explain(err, "list", ref{kind: kindPropagationPolicy, resource: ppSource.resource})
	}
	for _, p := range pps.Items {
		add(p.Annotations, p.Namespace, "pp "+p.Namespace+"/"+p.Name)
	}
	cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := h.client.List(ctx, cpps); err != nil {
		return nil, h.explain(err, "list", ref{kind: kindClusterPropagationPolicy, resource: cppSource.resource})
	}
	for _, p := range cpps.Items {
		add(p.Annotations, "", "cpp "+p.Name)
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := h.client.List(ctx, clusters); err != nil {
		return nil, h.explain(err, "list", ref{kind: "Cluster", resource: "clusters.cluster.karmada.io"})
	}
	for _, c := range clusters.Items {
		add(c.Annotations, "", "cluster "+c.Name)
	}
	return gateListing{objects: found, waiters: waiters}, nil
}

func (l gateListing) table(wide bool, h *hub) *table {
	t := &table{headers: withNamespace(h.allNamespaces, "NAMESPACE", "NAME", "OPENED", "DEFAULT", "UNTIL", "SCHEDULES", "HOLDS", "AGE")}
	if wide {
		t.headers = append(t.headers, "MESSAGE")
	}
	for _, obj := range l.objects {
		g := obj.(*gatingv1alpha1.Gate)
		opened, message := "Unknown", ""
		if c := meta.FindStatusCondition(g.Status.Conditions, gatingv1alpha1.ConditionOpened); c != nil {
			opened, message = string(c.Status), c.Message
		}
		until := "-"
		if g.Status.ResetToDefaultAt != nil {
			until = g.Status.ResetToDefaultAt.UTC().Format(time.RFC3339)
		}
		var schedules []string
		for _, s := range g.Spec.Schedules {
			schedules = append(schedules, fmt.Sprintf("%s(%s %q %s, %s)", s.Name, s.Action, s.Cron, orUTC(s.TimeZone), s.Duration.Duration))
		}
		holds := l.waiters[g.Namespace+"/"+g.Name]
		if opened == "True" && len(holds) > 0 {
			holds = append([]string{"nothing now; waiting:"}, holds...)
		}
		cells := withNamespace(h.allNamespaces, g.Namespace, g.Name, opened, orDash(g.Spec.Default), until,
			orDash(strings.Join(schedules, ", ")), orDash(strings.Join(holds, ", ")), age(g.CreationTimestamp, h.now()))
		if wide {
			cells = append(cells, message)
		}
		t.add(cells...)
	}
	return t
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orUTC(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}
