package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/keys"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/revision"
)

// --- abort ------------------------------------------------------------------

func newRolloutAbortCommand(connect connector) *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "abort NAME",
		Short: "Stop the current revision: release nothing more, and put the clusters that got it back on their last healthy revision",
		Long: `Abort writes annotation rollouts.federator.dev/abort with the current revision on
the Rollout. The rollout controller then releases nothing more of that
revision, and puts every cluster that got it back on the last revision that
was healthy there; the others keep what they have. A new revision of the
templates rolls out again from the first stage.`,
		Example: `  federator rollout abort web -n demo`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return abortRollout(cmd.Context(), h, cmd.OutOrStdout(), args[0])
		},
	}
	conn.addFlags(cmd.Flags(), false)
	return cmd
}

func abortRollout(ctx context.Context, h *hub, out io.Writer, arg string) error {
	r, err := getRollout(ctx, h, arg)
	if err != nil {
		return err
	}
	if r.status.Revision == 0 {
		return fmt.Errorf("%s has taken in no revision yet; nothing to abort", r.ref())
	}
	rev := strconv.FormatInt(r.status.Revision, 10)
	if r.obj.GetAnnotations()[rolloutsv1alpha1.AbortAnnotation] == rev {
		fmt.Fprintf(out, "%s: revision %s is already aborted; nothing changed\n", r.ref(), rev)
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, rolloutsv1alpha1.AbortAnnotation, rev)
	if err := h.client.Patch(ctx, r.obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return h.explain(err, "patch", r.ref())
	}
	fmt.Fprintf(out, "%s: revision %s aborted; the clusters that got it go back to their last healthy revision (`federator rollout status %s` follows it)\n",
		r.ref(), rev, r.arg())
	return nil
}

// --- undo -------------------------------------------------------------------

func newRolloutUndoCommand(connect connector) *cobra.Command {
	var (
		conn   connection
		toRev  int64
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "undo NAME [--to-revision N]",
		Short: "Write the templates back as a kept revision had them (the one before the current by default)",
		Long: `Undo is kubectl rollout undo for a federation: it writes each template the
policy claims back on the hub as the Rollout's kept revision had it (by
default the one before the current). That content is a new revision, and it
rolls out stage by stage like any other. Undo changes templates on the hub:
where they come from Git, change them there too, or the next sync brings the
current content back. Hold annotations on the templates are kept as they are.
Undo writes templates only: a revision that changed what clusters get through
an OverridePolicy or ClusterOverridePolicy is undone by changing that policy
back, or, for the clusters that got it, by ` + "`federator rollout abort`" + `.`,
		Example: `  federator rollout undo web -n demo
  federator rollout undo web -n demo --to-revision 3 --dry-run`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return undoRollout(cmd.Context(), h, cmd.OutOrStdout(), args[0], toRev, dryRun)
		},
	}
	conn.addFlags(cmd.Flags(), false)
	cmd.Flags().Int64Var(&toRev, "to-revision", 0, "the kept revision to go back to; 0: the one before the current")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be written, write nothing")
	return cmd
}

func undoRollout(ctx context.Context, h *hub, out io.Writer, arg string, toRev int64, dryRun bool) error {
	r, err := getRollout(ctx, h, arg)
	if err != nil {
		return err
	}
	if toRev == 0 {
		toRev = r.status.Revision - 1
	}
	if toRev < 1 || toRev >= r.status.Revision {
		return fmt.Errorf("%s is at revision %d: --to-revision must name an earlier one (1 to %d)", r.ref(), r.status.Revision, r.status.Revision-1)
	}
	ro := revision.Rollout{Obj: r.obj, Spec: r.spec, Status: r.status, Kind: r.kind.kind}
	key := ro.HistoryKey(toRev)
	cr := &appsv1.ControllerRevision{}
	if err := h.client.Get(ctx, key, cr); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: revision %d is no longer kept (ControllerRevision %s is gone; spec.revisionHistoryLimit keeps the last ones)", r.ref(), toRev, key)
		}
		return h.explain(err, "get", ref{kind: "ControllerRevision", namespace: key.Namespace, name: key.Name, resource: "controllerrevisions.apps"})
	}
	content, err := revision.Read(cr)
	if err != nil {
		return fmt.Errorf("%s: revision %d cannot be read: %w", r.ref(), toRev, err)
	}
	if len(content.Templates) == 0 {
		return fmt.Errorf("%s: revision %d kept no template; nothing to undo", r.ref(), toRev)
	}
	var written, same []string
	for _, t := range content.Templates {
		kept := &unstructured.Unstructured{Object: t.Object}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(kept.GroupVersionKind())
		what := kept.GetKind() + " " + kept.GetName()
		if kept.GetNamespace() != "" {
			what = kept.GetKind() + " " + kept.GetNamespace() + "/" + kept.GetName()
		}
		if err := h.client.Get(ctx, client.ObjectKeyFromObject(kept), live); err != nil {
			if apierrors.IsNotFound(err) {
				fmt.Fprintf(out, "%s: gone from the hub; not brought back (apply it again to restore it)\n", what)
				continue
			}
			return h.explain(err, "get", ref{kind: kept.GetKind(), namespace: kept.GetNamespace(), name: kept.GetName()})
		}
		if now, err := revision.Hash(live); err == nil && now == t.Hash {
			// The template is as the revision had it: what changed since
			// is in the overrides that apply to it, which undo does not
			// write.
			same = append(same, what)
			continue
		}
		restored := restoreContent(live, kept)
		if dryRun {
			written = append(written, what)
			continue
		}
		if err := h.client.Update(ctx, restored); err != nil {
			return fmt.Errorf("write %s back as revision %d had it: %w", what, toRev, err)
		}
		written = append(written, what)
	}
	if len(written) == 0 && len(same) > 0 {
		return fmt.Errorf("%s: %s already as revision %d had them: what changed since is in the OverridePolicies or ClusterOverridePolicies that apply to them, "+
			"and undo writes templates only; change those policies back (the change rolls out as a new revision), or `federator rollout abort %s` to put the clusters that got the current revision back",
			r.ref(), strings.Join(same, ", "), toRev, r.arg())
	}
	verb := "written back"
	if dryRun {
		verb = "would be written back (dry run)"
	}
	fmt.Fprintf(out, "%s: %s %s as revision %d had them; they roll out as a new revision (`federator rollout status %s` follows it)\n",
		r.ref(), strings.Join(written, ", "), verb, toRev, r.arg())
	if len(same) > 0 {
		fmt.Fprintf(out, "%s: %s already as revision %d had them; overrides changed since are not undone (change those policies back)\n",
			r.ref(), strings.Join(same, ", "), toRev)
	}
	return nil
}

// restoreContent is live with kept's content: every field but metadata and
// status from kept, kept's labels and annotations, and the hold annotations
// live has now (what holds the template stays as it is).
func restoreContent(live, kept *unstructured.Unstructured) *unstructured.Unstructured {
	out := live.DeepCopy()
	for k := range out.Object {
		if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
			delete(out.Object, k)
		}
	}
	for k, v := range kept.DeepCopy().Object {
		if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
			out.Object[k] = v
		}
	}
	out.SetLabels(kept.GetLabels())
	annotations := map[string]string{}
	for k, v := range kept.GetAnnotations() {
		if !holdAnnotation(k) {
			annotations[k] = v
		}
	}
	for k, v := range live.GetAnnotations() {
		if holdAnnotation(k) {
			annotations[k] = v
		}
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	out.SetAnnotations(annotations)
	return out
}

// holdAnnotation: the keys that hold a template or delay its deletion
// (apis/keys), which undo leaves as they are.
func holdAnnotation(k string) bool {
	return keys.DecidesHolds(k)
}
