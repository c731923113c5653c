package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterkeys "github.com/federator-dev/federator/apis/cluster"
	"github.com/federator-dev/federator/config/install"
	"github.com/federator-dev/federator/internal/leaving"
	"github.com/federator-dev/federator/pkg/membership"
)

// unjoinPoll is how often unjoin looks at the Cluster it waits for.
const unjoinPoll = 500 * time.Millisecond

func newUnjoinCommand(connect connector) *cobra.Command {
	var conn connection
	var hubKubeconfig string
	var waitGone bool
	var timeout time.Duration
	var agentIn connection
	cmd := &cobra.Command{
		Use:   "unjoin NAME [--wait=false] [--timeout 2m] [--cluster-kubeconfig FILE]",
		Short: "Remove member NAME from the hub as Karmada does: the objects placed there are deleted, then its Cluster and credentials go",
		Long: `Unjoin deletes the Cluster NAME, as karmadactl unjoin does, and says first what
that does. Federator's controller on the hub (its Cluster carries the finalizer
` + clusterkeys.ControllerFinalizer + `) then deletes every Work in namespace
karmada-es-NAME, and with each Work the objects it placed in NAME, as Karmada
does: at once, even those a suspension or a gate holds (in a Pull cluster its
agent deletes them, while it reports the cluster Ready). Some stay in NAME,
no longer managed:
  - objects whose policy preserves them (preserveResourcesOnDeletion);
  - objects with a deletion delay (federator.dev/deletion-delay): the countdown
    could never be taken back, nor end, once NAME is gone, and deleting them at
    once would skip the delay asked for; deletion countdowns already running
    there are dropped when the Cluster goes, their objects kept;
  - the namespaces the hub propagated to NAME, which may hold what stays;
  - everything, when NAME is not Ready: its Works are let go without reaching
    it, so a cluster that is gone can still be unjoined.
The controller keeps reaching NAME until then, and removes the finalizer once
karmada-es-NAME holds no Work and no binding targets NAME (namespace
karmada-es-NAME itself stays, for a later join). Unjoin waits until the Cluster is
gone (--timeout; --wait=false returns at once), then deletes its credential
Secrets in karmada-cluster on the hub, and a Pull cluster's agent ServiceAccount
and roles there (` + membership.AgentName("NAME") + `). Objects that were kept are taken back
if NAME joins again. In the cluster itself, namespace karmada-cluster (the
ServiceAccounts join created) stays.

A Pull cluster's agent (federator join NAME --mode pull) runs in the cluster
until the Cluster is gone. With --cluster-kubeconfig, the cluster's kubeconfig
(karmadactl unjoin's flag), unjoin then deletes it there: Deployment, Secret
` + install.AgentHubKubeconfigSecret + `, ServiceAccount, ClusterRole, ClusterRoleBinding and the Lease of
its leader election; namespace ` + install.Namespace + ` stays, as it may hold other
things (federator's own controller). Without it, unjoin says what stays there
and how to delete it.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if hubKubeconfig != "" {
				if conn.kubeconfig != "" {
					return fmt.Errorf("--kubeconfig and --hub-kubeconfig both name the hub: pass one of them")
				}
				conn.kubeconfig, conn.kubeconfigFlag = hubKubeconfig, "hub-kubeconfig"
			}
			if agentIn.kubeconfig == "" && agentIn.context != "" {
				return fmt.Errorf("--cluster-context names a context of --cluster-kubeconfig: pass --cluster-kubeconfig too")
			}
			if agentIn.kubeconfig != "" && !waitGone {
				return fmt.Errorf("--cluster-kubeconfig deletes the agent of %s once its Cluster is gone (until then the agent deletes what "+
					"its Works placed there), which --wait=false does not wait for: drop one of them", name)
			}
			h, err := connect(conn)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			cluster := &clusterv1alpha1.Cluster{}
			if err := h.client.Get(ctx, client.ObjectKey{Name: name}, cluster); apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				return fmt.Errorf("no cluster %s is joined to the hub %s%s", name, h.host, knownClusters(ctx, h))
			} else if err != nil {
				return fmt.Errorf("reading Cluster %s on the hub %s: %w", name, h.host, err)
			}
			pull := membership.Pull(cluster)
			var member *hub
			if agentIn.kubeconfig != "" {
				if member, err = agentMember(ctx, connect, agentIn, cluster); err != nil {
					return err
				}
			}
			works, err := clusterWorks(ctx, h, name)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, unjoinPlan(cluster, works))
			if cluster.DeletionTimestamp.IsZero() {
				if err := h.client.Delete(ctx, cluster); client.IgnoreNotFound(err) != nil {
					return fmt.Errorf("deleting Cluster %s on the hub %s: %w", name, h.host, err)
				}
				fmt.Fprintf(out, "Cluster %s deleted\n", name)
			} else {
				fmt.Fprintf(out, "Cluster %s is being deleted already (since %s)\n", name, cluster.DeletionTimestamp.UTC().Format(time.RFC3339))
			}
			secrets := credentialSecrets(cluster)
			if !waitGone {
				fmt.Fprintf(out, "not waiting (--wait=false): the Cluster goes once the hub has let go of %s", name)
				if len(secrets) > 0 {
					fmt.Fprintf(out, "; its credentials stay until then, as the controller reaches %s with them (owned by the Cluster, they go with it "+
						"where the hub runs a garbage collector; else delete them once it is gone: kubectl -n %s delete secret %s)",
						name, membership.ClusterNamespace, strings.Join(secretNames(secrets), " "))
				}
				if pull {
					fmt.Fprintf(out, "; its agent's ServiceAccount and roles on the hub (%s) are owned by it too, and its agent in %s "+
						"runs until you delete it there: %s", membership.AgentName(name), name, agentDeleteCommands(name))
				}
				fmt.Fprintln(out)
				return nil
			}
			if err := waitClusterGone(ctx, h, out, name, timeout); err != nil {
				return err
			}
			// Owned by the Cluster, so a garbage collector would delete them
			// too; a hub may run none (a bare API server).
			var owned []client.Object
			for _, secret := range secrets {
				owned = append(owned, secret)
			}
			if pull {
				owned = append(owned, membership.PullObjects(name)...)
			}
			for _, o := range owned {
				what := fmt.Sprintf("%s %s", kindOf(h, o), path.Join(o.GetNamespace(), o.GetName()))
				switch err := h.client.Delete(ctx, o); {
				case apierrors.IsNotFound(err):
				case err != nil:
					return fmt.Errorf("deleting %s (of %s) on the hub: %w", what, name, err)
				default:
					fmt.Fprintf(out, "%s deleted\n", what)
				}
			}
			switch {
			case member != nil:
				objs, err := agentInMember(name)
				if err != nil {
					return err
				}
				if err := deleteAll(ctx, out, member, "cluster "+name, "unjoin", unjoinAdvice, objs); err != nil {
					return err
				}
				fmt.Fprintf(out, "in %s, namespace %s stays (it may hold other things: federator's own controller): "+
					"delete it there if nothing else lives in it\n", name, install.Namespace)
			case pull:
				fmt.Fprintf(out, "in the cluster itself, the agent stays, its token void: %s; delete it there: %s "+
					"(federator unjoin --cluster-kubeconfig does this)\n", agentObjectList(name), agentDeleteCommands(name))
			default:
				fmt.Fprintf(out, "in the cluster itself, namespace %s (the ServiceAccounts join created, ClusterRole %s) stays: "+
					"delete them with the cluster's own kubeconfig once no hub uses them\n",
					membership.ClusterNamespace, names.GenerateRoleName(names.GenerateServiceAccountName(name)))
			}
			return nil
		},
	}
	f := cmd.Flags()
	conn.addFlags(f, false)
	_ = f.MarkHidden("namespace")
	f.StringVar(&hubKubeconfig, "hub-kubeconfig", "", "the hub's kubeconfig, as join names it (same as --kubeconfig here)")
	f.BoolVar(&waitGone, "wait", true, "wait until the Cluster is gone, then delete its credential Secrets")
	f.DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the Cluster to go")
	f.StringVar(&agentIn.kubeconfig, "cluster-kubeconfig", "", "kubeconfig `FILE` of a Pull cluster: delete its agent there once the Cluster is gone")
	f.StringVar(&agentIn.context, "cluster-context", "", "context of --cluster-kubeconfig to use (default: its current context)")
	agentIn.kubeconfigFlag = "cluster-kubeconfig"
	return cmd
}

func clusterWorks(ctx context.Context, h *hub, cluster string) ([]workv1alpha1.Work, error) {
	works := &workv1alpha1.WorkList{}
	execNS := names.GenerateExecutionSpaceName(cluster)
	if err := h.client.List(ctx, works, client.InNamespace(execNS)); err != nil {
		return nil, fmt.Errorf("listing the Works of %s in %s: %w", cluster, execNS, err)
	}
	return works.Items, nil
}

// unjoinPlan says what deleting cluster does to what its Works placed
// there, as the hub's Work controller will decide it (leaving.OnLeave).
func unjoinPlan(cluster *clusterv1alpha1.Cluster, works []workv1alpha1.Work) string {
	execNS := names.GenerateExecutionSpaceName(cluster.Name)
	ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	isReady := ready != nil && ready.Status == metav1.ConditionTrue
	counts := map[leaving.Outcome]int{}
	for i := range works {
		for outcome, n := range leaving.OnLeave(isReady, &works[i]) {
			counts[outcome] += n
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "unjoining %s: %s in %s %s deleted", cluster.Name, counted(len(works), "its 1 Work", "its %d Works"), execNS,
		counted(len(works), "is", "are"))
	if len(works) == 0 {
		b.WriteString(", none placed anything there")
		return b.String()
	}
	if !isReady {
		why := "it has no Ready condition"
		if ready != nil {
			why = fmt.Sprintf("%s: %s", ready.Reason, ready.Message)
		}
		fmt.Fprintf(&b, " without reaching %s, which is not Ready (%s): the objects they placed there stay, no longer managed", cluster.Name, why)
		if n := counts[leaving.Preserved]; n > 0 {
			fmt.Fprintf(&b, " (%d of them preserved on deletion by their policy anyway)", n)
		}
		return b.String()
	}
	fmt.Fprintf(&b, ", and with them what they placed in %s: %s deleted from %s", cluster.Name,
		counted(counts[leaving.Deleted], "1 object", "%d objects"), cluster.Name)
	var kept []string
	for _, outcome := range []leaving.Outcome{leaving.Preserved, leaving.Delayed, leaving.Namespace} {
		if n := counts[outcome]; n > 0 {
			kept = append(kept, fmt.Sprintf("%d %s", n, outcome))
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(&b, "; staying there, no longer managed: %s", strings.Join(kept, ", "))
	}
	return b.String()
}

func credentialSecrets(cluster *clusterv1alpha1.Cluster) []*corev1.Secret {
	var out []*corev1.Secret
	for _, ref := range []*clusterv1alpha1.LocalSecretReference{cluster.Spec.SecretRef, cluster.Spec.ImpersonatorSecretRef} {
		if ref != nil {
			out = append(out, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}})
		}
	}
	return out
}

func secretNames(secrets []*corev1.Secret) []string {
	out := make([]string, 0, len(secrets))
	for _, s := range secrets {
		out = append(out, s.Name)
	}
	return out
}

// waitClusterGone waits until the Cluster is gone, saying how many Works
// are left as that changes, and, when it gives up, what is still there and
// why.
func waitClusterGone(ctx context.Context, h *hub, out io.Writer, name string, timeout time.Duration) error {
	fmt.Fprintf(out, "waiting up to %s for Cluster %s to go (federator's controller on the hub deletes its Works and their objects first)...\n", timeout, name)
	cluster := &clusterv1alpha1.Cluster{}
	var works []workv1alpha1.Work
	var lastErr error
	lastLeft := -1
	err := wait.PollUntilContextTimeout(ctx, unjoinPoll, timeout, true, func(ctx context.Context) (bool, error) {
		lastErr = h.client.Get(ctx, client.ObjectKey{Name: name}, cluster)
		if apierrors.IsNotFound(lastErr) {
			return true, nil
		}
		if lastErr != nil {
			return false, nil
		}
		if works, lastErr = clusterWorks(ctx, h, name); lastErr == nil && len(works) != lastLeft {
			lastLeft = len(works)
			fmt.Fprintf(out, "  %s left in %s\n", counted(lastLeft, "1 Work", "%d Works"), names.GenerateExecutionSpaceName(name))
		}
		return false, nil
	})
	if err == nil {
		fmt.Fprintf(out, "Cluster %s is gone\n", name)
		return nil
	}
	if lastErr != nil {
		return fmt.Errorf("the Cluster %s is still there after %s: %w", name, timeout, lastErr)
	}
	return errors.New(stillLeaving(ctx, h, cluster, works, timeout))
}

// stillLeaving says why a Cluster is still there and how to go on.
func stillLeaving(ctx context.Context, h *hub, cluster *clusterv1alpha1.Cluster, works []workv1alpha1.Work, timeout time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the Cluster %s is still there after %s, held by its finalizers %s", cluster.Name, timeout, strings.Join(cluster.Finalizers, ", "))
	others := slices.DeleteFunc(slices.Clone(cluster.Finalizers), func(f string) bool { return f == clusterkeys.ControllerFinalizer })
	if len(others) > 0 {
		fmt.Fprintf(&b, "; %s are not federator's: whatever put them there must remove them", strings.Join(others, ", "))
	}
	if !slices.Contains(cluster.Finalizers, clusterkeys.ControllerFinalizer) {
		return b.String()
	}
	switch {
	case len(works) > 0:
		var listed []string
		for i, w := range works {
			if i == 5 {
				listed = append(listed, fmt.Sprintf("and %d more", len(works)-5))
				break
			}
			listed = append(listed, w.Name)
		}
		fmt.Fprintf(&b, ". %s left in %s (%s): federator's controller deletes their objects from %s before it lets each go; "+
			"if none is running against this hub (federator install, or federator controller), nothing does", counted(len(works), "1 Work is", "%d Works are"),
			names.GenerateExecutionSpaceName(cluster.Name), strings.Join(listed, ", "), cluster.Name)
		if ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady); ready != nil && ready.Status == metav1.ConditionTrue {
			fmt.Fprintf(&b, "; if %s stopped answering, its Works are let go once the hub sees it not Ready", cluster.Name)
		}
	default:
		targeting, err := leaving.BindingsTargeting(ctx, h.client, cluster.Name)
		if err == nil && len(targeting) > 0 {
			fmt.Fprintf(&b, ". No Work is left, but bindings still target %s (%s): federator's binding controller places them again without it", cluster.Name, strings.Join(targeting, ", "))
		} else {
			fmt.Fprintf(&b, ". No Work is left and no binding targets %s: federator's controller removes the finalizer, is one running against this hub "+
				"(federator install, or federator controller)?", cluster.Name)
		}
	}
	fmt.Fprintf(&b, ". Run unjoin %s again to keep waiting once the controller runs; or, to let go of %s without deleting anything more there, "+
		"remove the finalizer yourself (kubectl patch cluster %s --type merge -p '{\"metadata\":{\"finalizers\":null}}'), then delete its Secrets in %s",
		cluster.Name, cluster.Name, cluster.Name, membership.ClusterNamespace)
	return b.String()
}

// counted is one when n is 1, else many with n in place of its %d.
func counted(n int, one, many string) string {
	if n == 1 {
		return one
	}
	if !strings.Contains(many, "%d") {
		return many
	}
	return fmt.Sprintf(many, n)
}
