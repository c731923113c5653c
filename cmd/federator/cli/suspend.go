package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/pkg/hold"
)

func newSuspendCommand(connect connector) *cobra.Command {
	var (
		conn     connection
		reason   string
		clusters []string
	)
	cmd := &cobra.Command{
		Use:   "suspend pp|cpp|KIND NAME [-m REASON] [--clusters a,b]",
		Short: "Hold what a policy or a template propagates, on every cluster or on some, with a reason",
		Long: `Hold dispatching of what a PropagationPolicy (pp), ClusterPropagationPolicy (cpp)
or a single resource template carries, by setting the annotation
propagation.federator.dev/suspended (every cluster) or, with --clusters,
suspended.propagation.federator.dev/<cluster> (those clusters only). Its value
is the reason (-m), "true" when none is given. No generation rolls; members
keep what they run. Suspending again updates the reason. A Rollout or
ClusterRollout (suspend rollout NAME) pauses as a whole, as
` + "`federator rollout pause`" + ` does.`,
		Example: `  federator suspend pp web -n demo -m "incident 42: 5xx on checkout"
  federator suspend deployment web -n demo --clusters member3 -m "canary looks bad"`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return setSuspension(cmd.Context(), h, cmd.OutOrStdout(), args[0], args[1], clusters, reason, true)
		},
	}
	conn.addFlags(cmd.Flags(), false)
	cmd.Flags().StringVarP(&reason, "message", "m", "", "the `REASON`, for the people who read it on the object, in the Works and in federator get rollout")
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "suspend only these clusters (comma-separated)")
	return cmd
}

func newResumeCommand(connect connector) *cobra.Command {
	var (
		conn     connection
		clusters []string
	)
	cmd := &cobra.Command{
		Use:   "resume pp|cpp|KIND NAME [--clusters a,b]",
		Short: "Remove a suspension annotation; says what still holds, if anything",
		Long: `Remove the annotation propagation.federator.dev/suspended (or, with --clusters,
suspended.propagation.federator.dev/<cluster>) from a policy, a template or a
Rollout (as ` + "`federator rollout resume`" + ` does). What
is not suspended says so and exits 0. Whatever still holds the same clusters
(a policy's spec.suspension, the annotation on the policy or on the template)
is named with what releases it. ` + "`federator diff`" + ` shows first what resuming changes.`,
		Example: `  federator resume pp web -n demo
  federator resume deployment web -n demo --clusters member3`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return setSuspension(cmd.Context(), h, cmd.OutOrStdout(), args[0], args[1], clusters, "", false)
		},
	}
	conn.addFlags(cmd.Flags(), false)
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "resume only these clusters (comma-separated)")
	return cmd
}

// setSuspension suspends (or resumes) the object kindArg/name on every
// cluster or on clusters, tells what it did and, on resume, what still
// holds. Bad input is refused before anything is written.
func setSuspension(ctx context.Context, h *hub, out io.Writer, kindArg, name string, clusters []string, reason string, suspend bool) error {
	// A Rollout or ClusterRollout pauses as a whole, as `rollout pause`
	// does, and says so in the same words.
	if _, _, err := parseRolloutArg(kindArg + "/" + name); err == nil {
		if len(clusters) > 0 {
			return fmt.Errorf("%s %s: a rollout pauses as a whole; --clusters suspends clusters of a policy or a template, "+
				"e.g. `federator suspend pp NAME --clusters %s`", kindArg, name, strings.Join(clusters, ","))
		}
		return setRolloutPause(ctx, h, out, kindArg+"/"+name, reason, suspend)
	}
	k, err := h.resolveKind(kindArg)
	if err != nil {
		return err
	}
	r := k.ref(h.namespace, name)
	obj, err := getObject(ctx, h.client, k.gvk, r.namespace, name)
	if err != nil {
		return h.explain(err, "get", r)
	}
	if err := validateClusters(ctx, h, namesToValidate(obj.GetAnnotations(), clusters, suspend)); err != nil {
		return err
	}
	var changes []annotationChange
	if suspend {
		changes = suspendChanges(obj.GetAnnotations(), clusters, reason)
	} else {
		changes = resumeChanges(obj.GetAnnotations(), clusters)
	}
	patch := mergePatch(changes)
	if patch != nil {
		if err := h.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return h.explain(err, "patch", r)
		}
	}
	for _, c := range changes {
		fmt.Fprintln(out, c.describe(r))
	}
	if suspend {
		return nil
	}
	cases, err := holdCases(ctx, h, k, obj)
	if err != nil {
		return err
	}
	still, targets := stillHeld(cases, clusters)
	for _, line := range still {
		fmt.Fprintf(out, "%s: %s\n", r, line)
	}
	if len(still) == 0 && patch != nil && len(targets) > 0 {
		fmt.Fprintf(out, "%s: nothing else holds %s; dispatching resumes\n", r, strings.Join(targets, ", "))
	}
	return nil
}

// validateClusters refuses names of clusters the hub does not know
// (pkg/hold's rule for unknown cluster names): a typo would otherwise hold
// (or release) nothing, silently.
func validateClusters(ctx context.Context, h *hub, clusters []string) error {
	if len(clusters) == 0 {
		return nil
	}
	registered, err := clusterNames(ctx, h)
	if err != nil {
		return err
	}
	unknown := hold.UnknownClusters(clusters, registered)
	switch {
	case len(unknown) == 0:
		return nil
	case slices.Contains(unknown, ""):
		return fmt.Errorf("--clusters holds an empty name: list cluster names separated by commas (registered: %s); nothing changed",
			strings.Join(registered, ", "))
	}
	return fmt.Errorf("--clusters: cluster %q is not registered on the hub (registered: %s); nothing changed",
		unknown[0], strings.Join(registered, ", "))
}

// namesToValidate are the --clusters names that must be registered: on
// resume, a name the object carries an annotation for is not, so the
// annotation of a cluster that has left (which holds every cluster) can
// still be removed.
func namesToValidate(annotations map[string]string, clusters []string, suspend bool) []string {
	if suspend {
		return clusters
	}
	return slices.DeleteFunc(slices.Clone(clusters), func(c string) bool {
		_, annotated := annotations[policykeys.ClusterSuspendedAnnotationPrefix+c]
		return c != "" && annotated
	})
}

func clusterNames(ctx context.Context, h *hub) ([]string, error) {
	list := &clusterv1alpha1.ClusterList{}
	if err := h.client.List(ctx, list); err != nil {
		return nil, h.explain(err, "list", ref{kind: "Clusters", resource: "clusters.cluster.karmada.io"})
	}
	names := make([]string, 0, len(list.Items))
	for _, c := range list.Items {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return names, nil
}
