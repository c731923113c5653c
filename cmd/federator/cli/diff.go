package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/federator-dev/federator/apis/keys"
	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// Exit codes of diff, as kubectl diff's.
const (
	diffNone   = 0
	diffFound  = 1
	diffFailed = 2
)

func newDiffCommand(connect connector) *cobra.Command {
	var (
		conn     connection
		clusters []string
	)
	cmd := &cobra.Command{
		Use:   "diff pp|cpp|KIND NAME [--clusters a,b]",
		Short: "Show what resuming would change in each held member: live object against a server-side dry run",
		Long: `For each held cluster of a template (or of every template a policy propagates),
or for the clusters --clusters names, print a unified diff of the member's live
object against a server-side dry-run apply of what the hub would dispatch there
once resumed. Only what the hub manages is compared: status, managedFields and
the server's bookkeeping (resourceVersion, uid, generation, ...) are left out.
Nothing is written anywhere.

Exit status, as kubectl diff: 0 no differences, 1 differences found, 2 an error.`,
		Example: `  federator diff deployment web -n demo
  federator diff pp web -n demo --clusters member2,member3`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := exactArgs(2)(cmd, args); err != nil {
				return &ExitError{Code: diffFailed, Err: err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return &ExitError{Code: diffFailed, Err: err}
			}
			code, err := diff(cmd.Context(), h, cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], args[1], clusters)
			if err != nil || code != diffNone {
				return &ExitError{Code: code, Err: err}
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &ExitError{Code: diffFailed, Err: err} })
	conn.addFlags(cmd.Flags(), false)
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "compare these clusters (comma-separated), held or not (default: every held cluster)")
	return cmd
}

// diff prints what resuming would change and returns diff's exit code.
// An error in one cluster does not hide the others' differences.
func diff(ctx context.Context, h *hub, out, errOut io.Writer, kindArg, name string, clusters []string) (int, error) {
	k, err := h.resolveKind(kindArg)
	if err != nil {
		return diffFailed, err
	}
	r := k.ref(h.namespace, name)
	if _, err := getObject(ctx, h.client, k.gvk, r.namespace, name); err != nil {
		return diffFailed, h.explain(err, "get", r)
	}
	if err := validateClusters(ctx, h, clusters); err != nil {
		return diffFailed, err
	}
	var bindings []binding
	if k.isPolicy() {
		if bindings, err = policyBindings(ctx, h.client, r); err != nil {
			return diffFailed, h.explain(err, "list", ref{kind: "ResourceBindings", resource: "resourcebindings.work.karmada.io"})
		}
	} else {
		b, found, err := templateBinding(ctx, h.client, k, r.namespace, name)
		if err != nil {
			return diffFailed, h.explain(err, "get", ref{kind: "ResourceBinding", resource: "resourcebindings.work.karmada.io"})
		}
		if !found {
			return diffFailed, fmt.Errorf("%s is not propagated (no binding for it on the hub): no policy selects it, so resuming changes nothing", r)
		}
		bindings = []binding{b}
	}
	code := diffNone
	var errs []error
	compared := 0
	for _, b := range bindings {
		targets := b.targets()
		for _, c := range clusters {
			if !slices.Contains(targets, c) && !k.isPolicy() {
				errs = append(errs, fmt.Errorf("%s: cluster %s is not one of its targets (%s)", b.template(), c, strings.Join(targets, ", ")))
			}
		}
		for _, cluster := range targets {
			work := &workv1alpha1.Work{}
			if err := h.client.Get(ctx, b.workKey(cluster), work); err != nil {
				if apierrors.IsNotFound(err) && len(clusters) == 0 {
					continue // nothing held there yet
				}
				errs = append(errs, fmt.Errorf("%s on %s: %w", b.template(), cluster, h.explain(err, "get", ref{kind: "Work", namespace: b.workKey(cluster).Namespace, name: b.workKey(cluster).Name, resource: "works.work.karmada.io"})))
				continue
			}
			held := ptr.Deref(work.Spec.SuspendDispatching, false)
			if (len(clusters) == 0 && !held) || (len(clusters) > 0 && !slices.Contains(clusters, cluster)) {
				continue
			}
			compared++
			text, err := diffCluster(ctx, h, cluster, work)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s on %s: %w", b.template(), cluster, err))
			case text != "":
				fmt.Fprint(out, text)
				code = diffFound
			}
		}
	}
	switch {
	case compared > 0 || len(errs) > 0:
	case len(clusters) > 0:
		fmt.Fprintf(errOut, "%s: propagates nothing to %s; nothing to compare\n", r, strings.Join(clusters, ", "))
	default:
		fmt.Fprintf(errOut, "%s: no cluster is held, so resuming changes nothing; name clusters with --clusters to compare them anyway\n", r)
	}
	if len(errs) > 0 {
		return diffFailed, errors.Join(errs...)
	}
	return code, nil
}

// diffCluster is the unified diff, for one cluster, of the member's live
// object against a server-side dry-run apply of what the Work would bring
// once resumed; "" when they agree. Dry run: the member stores nothing.
func diffCluster(ctx context.Context, h *hub, cluster string, work *workv1alpha1.Work) (string, error) {
	desired := resumedManifest(work)
	if desired == nil {
		return "", fmt.Errorf("the Work %s/%s carries no manifest it can decode", work.Namespace, work.Name)
	}
	c := &clusterv1alpha1.Cluster{}
	if err := h.client.Get(ctx, client.ObjectKey{Name: cluster}, c); err != nil {
		return "", h.explain(err, "get", ref{kind: "Cluster", name: cluster, resource: "clusters.cluster.karmada.io"})
	}
	member, err := h.member(ctx, c)
	if err != nil {
		return "", fmt.Errorf("reaching member %s: %w", cluster, err)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	switch err := member.Get(ctx, client.ObjectKeyFromObject(desired), live); {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return "", fmt.Errorf("reading %s from member %s: %w", objectLabel(desired), cluster, err)
	}
	if live != nil && !takesOver(live, desired) {
		return fmt.Sprintf("# %s: %s exists there but was not created by the hub; resuming will not overwrite it (conflictResolution Abort)\n",
			cluster, objectLabel(desired)), nil
	}
	dryRun := desired.DeepCopy()
	// What the dispatcher sends (same field manager, forced), so fields the
	// hub stopped setting show as removed, as they will be.
	if err := member.Apply(ctx, client.ApplyConfigurationFromUnstructured(dryRun),
		client.FieldOwner(policykeys.FieldManager), client.ForceOwnership, client.DryRunAll); err != nil {
		return "", fmt.Errorf("dry-run apply of %s to member %s: %w", objectLabel(desired), cluster, err)
	}
	return unifiedDiff(cluster, desired, live, dryRun)
}

// resumedManifest is what the Work would carry once resumed: the keys the
// hub keeps (apis/keys: the suspension annotations, which resume removes,
// the gates) are no change the resume brings; a Work written before members
// stopped getting them may still carry them.
func resumedManifest(work *workv1alpha1.Work) *unstructured.Unstructured {
	m := workkeys.FirstManifest(work)
	if m == nil {
		return nil
	}
	stripHubKeys(m)
	return m
}

func stripHubKeys(u *unstructured.Unstructured) {
	a := u.GetAnnotations()
	if a == nil {
		return
	}
	for k := range a {
		if !keys.ToMembers(k) {
			delete(a, k)
		}
	}
	if len(a) == 0 {
		a = nil
	}
	u.SetAnnotations(a)
}

// takesOver says whether the dispatcher would write over live (Karmada's
// rule: objects it created, or any with conflictResolution Overwrite).
func takesOver(live, desired *unstructured.Unstructured) bool {
	return live.GetLabels()[workkeys.ManagedLabel] == workkeys.ManagedLabelValue ||
		desired.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation] == workv1alpha2.ResourceConflictResolutionOverwrite
}

func objectLabel(u *unstructured.Unstructured) string {
	return ref{kind: u.GetKind(), namespace: u.GetNamespace(), name: u.GetName()}.String()
}

// unifiedDiff renders live (nil: absent) against after, both trimmed to
// what the hub manages; "" when they agree.
func unifiedDiff(cluster string, desired, live, after *unstructured.Unstructured) (string, error) {
	before := ""
	if live != nil {
		text, err := managedYAML(live, desired)
		if err != nil {
			return "", err
		}
		before = text
	}
	afterText, err := managedYAML(after, desired)
	if err != nil {
		return "", err
	}
	if before == afterText {
		return "", nil
	}
	label := fmt.Sprintf("%s %s %s", cluster, desired.GetAPIVersion(), objectLabel(desired))
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(before), B: lines(afterText),
		FromFile: label + " (live)", ToFile: label + " (after resume)", Context: 3,
	})
}

// lines splits YAML text into lines that keep their newline; unlike
// difflib.SplitLines it adds no empty line after the last, so a diff has no
// phantom blank line and an absent object is no lines at all.
func lines(text string) []string {
	out := strings.SplitAfter(text, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// managedYAML is obj as YAML with only what the hub manages: the
// top-level fields the desired manifest sets and the metadata a person
// reads; never status, managedFields or the server's bookkeeping, nor
// federator's applied-hash (bookkeeping too: it changes with any change).
func managedYAML(obj, desired *unstructured.Unstructured) (string, error) {
	out := map[string]any{}
	for k := range desired.Object {
		if k == "status" || k == "metadata" {
			continue
		}
		if v, ok := obj.Object[k]; ok {
			out[k] = v
		}
	}
	metadata := map[string]any{"name": obj.GetName()}
	if obj.GetNamespace() != "" {
		metadata["namespace"] = obj.GetNamespace()
	}
	if labels := obj.GetLabels(); len(labels) > 0 {
		metadata["labels"] = labels
	}
	annotations := obj.GetAnnotations()
	delete(annotations, workkeys.AppliedHashAnnotation)
	if len(annotations) > 0 {
		metadata["annotations"] = annotations
	}
	out["metadata"] = metadata
	raw, err := yaml.Marshal(out)
	return string(raw), err
}
