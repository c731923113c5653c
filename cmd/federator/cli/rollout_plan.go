package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/pkg/placement"
)

// federator rollout plan: which clusters each stage of a Rollout takes, from
// the policy's placement and the clusters registered now.

func newRolloutPlanCommand(connect connector) *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "plan NAME [-n NAMESPACE]",
		Short: "Show which clusters each stage of a rollout reaches",
		Long: `Resolve the rollout's stages against the hub's Clusters and its policy's
placement, as they are now: a stage's clusters are those it names, then those
its clusterSelector selects by Cluster labels among the placed clusters no
earlier stage has; the placed clusters no stage has form the implicit last
stage, "` + remainingStage + `". A named cluster that is not registered, or that the policy
does not place, is reported and reached by no stage. The placement is the
policy's (clusterAffinity or clusterAffinities, as the hub places); a template
whose kind a cluster does not serve skips that cluster on top of this.`,
		Example: `  federator rollout plan web -n demo
  federator rollout plan clusterrollout/platform`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return rolloutPlan(cmd.Context(), h, cmd.OutOrStdout(), args[0])
		},
	}
	conn.addFlags(cmd.Flags(), false)
	return cmd
}

// plannedStage is one stage as `rollout plan` resolves it.
type plannedStage struct {
	name     string
	by       string
	clusters []string
	notes    []string
}

// planStages resolves stages to clusters: placed are the clusters the
// policy places (sorted), registered every Cluster on the hub.
func planStages(stages []rolloutsv1alpha1.Stage, placed []string, registered []clusterv1alpha1.Cluster) []plannedStage {
	byName := map[string]*clusterv1alpha1.Cluster{}
	for i := range registered {
		byName[registered[i].Name] = &registered[i]
	}
	stageOf := map[string]string{}
	var out []plannedStage
	for _, s := range stages {
		p := plannedStage{name: s.Name}
		var by []string
		if len(s.Clusters) > 0 {
			by = append(by, "names")
		}
		for _, name := range s.Clusters {
			switch {
			case byName[name] == nil:
				p.notes = append(p.notes, name+": no such Cluster")
			case !slices.Contains(placed, name):
				p.notes = append(p.notes, name+": not placed by the policy")
			case stageOf[name] != "":
				p.notes = append(p.notes, fmt.Sprintf("%s: already in stage '%s'", name, stageOf[name]))
			default:
				stageOf[name] = s.Name
				p.clusters = append(p.clusters, name)
			}
		}
		if s.ClusterSelector != nil {
			selector, err := metav1.LabelSelectorAsSelector(s.ClusterSelector)
			if err != nil {
				p.notes = append(p.notes, "clusterSelector does not parse: "+err.Error())
				by = append(by, "selector (invalid)")
			} else {
				by = append(by, "selector "+selector.String())
				for _, name := range placed {
					if c := byName[name]; c != nil && stageOf[name] == "" && selector.Matches(labels.Set(c.Labels)) {
						stageOf[name] = s.Name
						p.clusters = append(p.clusters, name)
					}
				}
			}
		}
		if len(p.clusters) == 0 {
			p.notes = append(p.notes, "reaches no cluster; the stage is skipped")
		}
		slices.Sort(p.clusters)
		p.by = strings.Join(by, " + ")
		out = append(out, p)
	}
	rest := plannedStage{name: remainingStage, by: "placed, in no stage"}
	for _, name := range placed {
		if stageOf[name] == "" {
			rest.clusters = append(rest.clusters, name)
		}
	}
	return append(out, rest)
}

func rolloutPlan(ctx context.Context, h *hub, out io.Writer, arg string) error {
	r, err := getRollout(ctx, h, arg)
	if err != nil {
		return err
	}
	policyRef := ref{kind: r.kind.policyKind, name: r.spec.PolicyRef.Name, resource: "propagationpolicies.policy.karmada.io"}
	if r.kind.namespaced {
		policyRef.namespace = r.obj.GetNamespace()
	} else {
		policyRef.resource = "clusterpropagationpolicies.policy.karmada.io"
	}
	stored, err := getObject(ctx, h.client, policyv1alpha1.SchemeGroupVersion.WithKind(policyRef.kind), policyRef.namespace, policyRef.name)
	if err != nil {
		return fmt.Errorf("%s (its spec.policyRef): %w", r.ref(), h.explain(err, "get", policyRef))
	}
	spec, err := policykeys.StoredSpec(stored)
	if err != nil {
		return err
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := h.client.List(ctx, clusters); err != nil {
		return h.explain(err, "list", ref{kind: "Clusters", resource: "clusters.cluster.karmada.io"})
	}
	placed, err := placement.Place(&spec.Placement, clusters.Items, 0)
	if err != nil {
		return fmt.Errorf("%s: the placement of %s cannot be resolved: %w", r.ref(), policyRef, err)
	}
	var placedNames []string
	for _, t := range placed.Targets {
		placedNames = append(placedNames, t.Name)
	}
	slices.Sort(placedNames)
	fmt.Fprintf(out, "%s rolls out what %s places on %d cluster(s), in this order; the placed clusters no stage has go to the last stage, %q:\n",
		r.ref(), policyRef, len(placedNames), remainingStage)
	for _, u := range placed.Unknown {
		fmt.Fprintf(out, "%s: placement names %s: no such Cluster\n", policyRef, u)
	}
	t := &table{headers: []string{"STAGE", "BY", "CLUSTERS", "NOTES"}}
	for _, s := range planStages(r.spec.Stages, placedNames, clusters.Items) {
		t.add(s.name, s.by, strings.Join(s.clusters, ","), strings.Join(s.notes, "; "))
	}
	return t.write(out)
}
