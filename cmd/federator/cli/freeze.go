package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/pkg/gatestate"
)

var freezeRef = ref{kind: "Freeze", resource: "freezes.gating.federator.dev"}

// newFreezeCommand is `freeze [-m MESSAGE] [--clusters a,b] [--for D]`:
// one Freeze created on the hub, which every dispatcher checks before
// each write to a member.
func newFreezeCommand(connect connector) *cobra.Command {
	var (
		conn     connection
		message  string
		clusters []string
		dur      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "freeze [-m MESSAGE] [--clusters a,b] [--for DURATION]",
		Short: "Hold every write to every member (or those named), now, in one write",
		Long: `Create a Freeze (gating.federator.dev) on the hub: from the moment the hub
stores it, no dispatcher writes to the members it names (every member without
--clusters): no new version, no deletion, whatever the policies, Rollouts and
gates say. It takes effect within the hub's watch latency, whatever the number
of templates and clusters. It ends with ` + "`federator unfreeze`" + `, or, with --for, that long
after the hub stored it (the hub's clock, not this machine's). Several
freezes may be in force at once; a member is held while any holds it.`,
		Example: `  federator freeze -m "incident 42: payments errors"
  federator freeze --clusters member2,member3 --for 1h -m "maintenance"`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dur < 0 {
				return fmt.Errorf("--for %s: a duration must be positive (e.g. 30m, 1h); nothing was frozen", dur)
			}
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return freeze(cmd.Context(), h, cmd.OutOrStdout(), message, clusters, dur)
		},
	}
	conn.addFlags(cmd.Flags(), false)
	cmd.Flags().StringVarP(&message, "message", "m", "", "why, for those who see what it holds")
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "hold only these members (comma-separated; default every member)")
	cmd.Flags().DurationVar(&dur, "for", 0, "end the freeze this long after the hub stored it (e.g. 30m, 1h; default: until unfrozen)")
	return cmd
}

func freeze(ctx context.Context, h *hub, out io.Writer, message string, clusters []string, dur time.Duration) error {
	if err := validateClusters(ctx, h, clusters); err != nil {
		return err
	}
	f := &gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{GenerateName: "freeze-"},
		Spec: gatingv1alpha1.FreezeSpec{Clusters: slices.Compact(slices.Sorted(slices.Values(clusters))), Message: message}}
	if dur > 0 {
		f.Spec.Duration = &metav1.Duration{Duration: dur}
	}
	if err := h.client.Create(ctx, f); err != nil {
		return h.explain(err, "create", freezeRef)
	}
	what := "every member"
	if len(f.Spec.Clusters) > 0 {
		what = strings.Join(f.Spec.Clusters, ", ")
	}
	until := "until `federator unfreeze " + f.Name + "` (or `federator unfreeze`)"
	if end := gatestate.FreezeEnds(f); !end.IsZero() {
		until = fmt.Sprintf("until %s (--for %s), or `federator unfreeze %s`", end.UTC().Format(time.RFC3339), dur, f.Name)
	}
	fmt.Fprintf(out, "Freeze %s: every write to %s is held from %s (the hub's clock) %s\n",
		f.Name, what, f.CreationTimestamp.UTC().Format(time.RFC3339), until)
	return nil
}

// newUnfreezeCommand is `unfreeze [NAME...]`: every Freeze deleted in one
// write, or the ones named.
func newUnfreezeCommand(connect connector) *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "unfreeze [NAME...]",
		Short: "End every freeze (or the ones named), in one write",
		Long: `Delete the Freezes (gating.federator.dev) on the hub: every one in one write,
or those named. What they held goes out as the policies, Rollouts and gates
say; a member another freeze still names stays held.`,
		Example: `  federator unfreeze
  federator unfreeze freeze-x7k2p`,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return unfreeze(cmd.Context(), h, cmd.OutOrStdout(), args)
		},
	}
	conn.addFlags(cmd.Flags(), false)
	return cmd
}

func unfreeze(ctx context.Context, h *hub, out io.Writer, names []string) error {
	list := &gatingv1alpha1.FreezeList{}
	if err := h.client.List(ctx, list); err != nil {
		return h.explain(err, "list", freezeRef)
	}
	var have []string
	for _, f := range list.Items {
		have = append(have, f.Name)
	}
	slices.Sort(have)
	if len(names) == 0 {
		if len(have) == 0 {
			fmt.Fprintln(out, "No Freeze is in force: nothing to unfreeze")
			return nil
		}
		if err := h.client.DeleteAllOf(ctx, &gatingv1alpha1.Freeze{}); err != nil {
			return h.explain(err, "deletecollection", freezeRef)
		}
		fmt.Fprintf(out, "Unfrozen: Freeze %s deleted\n", strings.Join(have, ", "))
		return nil
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			in := "none is"
			if len(have) > 0 {
				in = strings.Join(have, ", ") + " are"
			}
			return fmt.Errorf("no Freeze %q on the hub (%s): check the name (`kubectl get freezes`); nothing was unfrozen", n, in)
		}
	}
	for _, n := range names {
		if err := client.IgnoreNotFound(h.client.Delete(ctx, &gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{Name: n}})); err != nil {
			r := freezeRef
			r.name = n
			return h.explain(err, "delete", r)
		}
	}
	left := slices.DeleteFunc(have, func(n string) bool { return slices.Contains(names, n) })
	msg := fmt.Sprintf("Unfrozen: Freeze %s deleted", strings.Join(names, ", "))
	if len(left) > 0 {
		msg += fmt.Sprintf("; still in force: %s", strings.Join(left, ", "))
	}
	fmt.Fprintln(out, msg)
	return nil
}
