package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// validateClusters refuses names of clusters the hub does not know: a
// typo would otherwise hold (or release) nothing, silently.
func validateClusters(ctx context.Context, h *hub, clusters []string) error {
	if len(clusters) == 0 {
		return nil
	}
	registered, err := clusterNames(ctx, h)
	if err != nil {
		return err
	}
	for _, c := range clusters {
		if c == "" {
			return fmt.Errorf("--clusters holds an empty name: list cluster names separated by commas (registered: %s); nothing changed",
				strings.Join(registered, ", "))
		}
		if !slices.Contains(registered, c) {
			return fmt.Errorf("--clusters: cluster %q is not registered on the hub (registered: %s); nothing changed",
				c, strings.Join(registered, ", "))
		}
	}
	return nil
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

// annotationChange is what suspend or resume does to one suspension
// annotation of one object.
type annotationChange struct {
	key string
	// cluster is "" for the every-cluster annotation.
	cluster string
	// before and after are the annotation's value; nil when absent.
	before, after *string
}

func (c annotationChange) writes() bool {
	if c.before == nil || c.after == nil {
		return c.before != c.after
	}
	return *c.before != *c.after
}

func (c annotationChange) scope() string {
	if c.cluster == "" {
		return "every cluster"
	}
	return "cluster " + c.cluster
}

// describe says, for a person, what the change did to obj.
func (c annotationChange) describe(obj ref) string {
	switch {
	case c.after != nil && c.before == nil:
		return fmt.Sprintf("%s: suspended on %s%s", obj, c.scope(), quotedReason(*c.after))
	case c.after != nil && !c.writes():
		return fmt.Sprintf("%s: already suspended on %s%s; nothing changed", obj, c.scope(), quotedReason(*c.after))
	case c.after != nil:
		return fmt.Sprintf("%s: already suspended on %s; reason updated from %s to %s", obj, c.scope(),
			reasonText(*c.before), reasonText(*c.after))
	case c.before == nil:
		return fmt.Sprintf("%s: not suspended on %s by annotation %s; nothing to resume", obj, c.scope(), c.key)
	}
	return fmt.Sprintf("%s: suspension on %s lifted: annotation %s removed (reason was %s)", obj, c.scope(), c.key, reasonText(*c.before))
}

// quotedReason is " (\"reason\")", or "" when none was given.
func quotedReason(value string) string {
	if value == "true" {
		return ""
	}
	return fmt.Sprintf(" (%q)", value)
}

func reasonText(value string) string {
	if value == "true" {
		return "none given"
	}
	return fmt.Sprintf("%q", value)
}

// suspensionKeys are the annotations that hold every cluster (none given)
// or the named ones.
func suspensionKeys(clusters []string) (keys, scopes []string) {
	if len(clusters) == 0 {
		return []string{policykeys.SuspendedAnnotation}, []string{""}
	}
	for _, c := range clusters {
		keys = append(keys, policykeys.ClusterSuspendedAnnotationPrefix+c)
		scopes = append(scopes, c)
	}
	return keys, scopes
}

// suspendChanges sets the suspension annotations clusters call for to
// reason ("true" when none: the hub reads the value as the reason).
func suspendChanges(annotations map[string]string, clusters []string, reason string) []annotationChange {
	value := reason
	if value == "" {
		value = "true"
	}
	return changes(annotations, clusters, &value)
}

// resumeChanges removes the suspension annotations clusters call for.
func resumeChanges(annotations map[string]string, clusters []string) []annotationChange {
	return changes(annotations, clusters, nil)
}

func changes(annotations map[string]string, clusters []string, after *string) []annotationChange {
	keys, scopes := suspensionKeys(clusters)
	out := make([]annotationChange, 0, len(keys))
	for i, key := range keys {
		c := annotationChange{key: key, cluster: scopes[i], after: after}
		if v, ok := annotations[key]; ok {
			c.before = &v
		}
		out = append(out, c)
	}
	return out
}

// mergePatch is the JSON merge patch of the changes that write; nil when
// none does, so nothing is sent.
func mergePatch(changes []annotationChange) []byte {
	annotations := map[string]*string{}
	for _, c := range changes {
		if c.writes() {
			annotations[c.key] = c.after
		}
	}
	if len(annotations) == 0 {
		return nil
	}
	raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	return raw
}

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
