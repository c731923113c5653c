package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
)

// newDeleteCommand is `delete --now KIND NAME --cluster C`: it asks, on the
// countdown's tombstone, for the deletion now, so RBAC on the hub governs
// who may, and the softdelete controller deletes (only the counted object,
// as it always does) and records it.
func newDeleteCommand(connect connector) *cobra.Command {
	var (
		conn    connection
		now     bool
		cluster string
		wait    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "delete --now KIND NAME [-n NAMESPACE] --cluster CLUSTER",
		Short: "End a deletion countdown: delete the object from that member now",
		Long: `An object the hub would delete from a member but whose deletion delay
(federator.dev/deletion-delay) defers it counts down there, marked with
federator.dev/deletion-timestamp (on a Pull cluster the hub keeps its
Work, marked so, instead). delete --now ends that countdown: the object is
deleted from the member at once (on a Pull cluster, by its agent once the
hub deletes the Work). Nothing else is deleted: an object that does not
count down is left alone.`,
		Example: `  federator delete --now deployment web -n demo --cluster member3`,
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !now {
				return fmt.Errorf("delete only ends a deletion countdown now: add --now (federator deletes from members what the hub no longer places there)")
			}
			if cluster == "" {
				return fmt.Errorf("--cluster is required: the member whose countdown ends")
			}
			h, err := connect(conn)
			if err != nil {
				return err
			}
			msg, err := deleteNow(cmd.Context(), h, args[0], args[1], cluster, wait)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
	conn.addFlags(cmd.Flags(), false)
	cmd.Flags().BoolVar(&now, "now", false, "delete now, ending the countdown (required)")
	cmd.Flags().StringVar(&cluster, "cluster", "", "the member cluster the object counts down in")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the deletion to be done (0: do not wait)")
	return cmd
}

func deleteNow(ctx context.Context, h *hub, kindArg, name, cluster string, wait time.Duration) (string, error) {
	k, err := h.resolveKind(kindArg)
	if err != nil {
		return "", err
	}
	r := k.ref(h.namespace, name)
	t, found, err := countdown.Lookup(ctx, h.client, cluster, k.gvk.Kind, r.namespace, name)
	if err != nil {
		return "", h.explain(err, "get", ref{kind: "ConfigMap", namespace: "karmada-es-" + cluster, resource: "configmaps"})
	}
	if !found {
		return "", fmt.Errorf("%s has no deletion countdown in cluster %s: nothing to delete now (check the name, -n and --cluster)", r, cluster)
	}
	asked := h.now().UTC()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		workkeys.DeleteNowAnnotation: asked.Format(time.RFC3339)}}})
	if err != nil {
		return "", err
	}
	tomb := t.ConfigMap()
	if err := h.client.Patch(ctx, tomb, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return "", h.explain(err, "patch", ref{kind: "ConfigMap", namespace: tomb.Namespace, name: tomb.Name, resource: "configmaps"})
	}
	due := "never (its delay " + t.Delay + " is invalid)"
	if at, ok := t.DueAt(0); ok {
		due = at.UTC().Format(time.RFC3339)
	}
	requested := fmt.Sprintf("%s in %s: deletion now requested (countdown started %s, due %s)", r, cluster,
		t.StartedAt.UTC().Format(time.RFC3339), due)
	if wait <= 0 {
		return requested + "; the softdelete controller deletes it", nil
	}
	deadline := time.Now().Add(wait)
	for {
		err := h.client.Get(ctx, client.ObjectKeyFromObject(tomb), &corev1.ConfigMap{})
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("%s deleted from %s (countdown started %s, was due %s)", r, cluster,
				t.StartedAt.UTC().Format(time.RFC3339), due), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s; not done after %s: is the softdelete controller running (`federator controller --controllers` includes softdelete)?", requested, wait)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
