package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/config/install"
	"github.com/federator-dev/federator/pkg/membership"
)

// members is how join reaches the cluster it registers; tests substitute
// one that needs no API server.
type members struct {
	// identify reaches the cluster and returns its identity, the UID of its
	// kube-system namespace (Karmada's cluster ID).
	identify func(ctx context.Context, cfg *rest.Config) (string, error)
	// register registers it with the hub as karmadactl join does.
	register func(ctx context.Context, hub client.Client, name string, cfg *rest.Config) error
}

// memberReachTimeout bounds join's first request to the cluster.
const memberReachTimeout = 15 * time.Second

func realMembers() members {
	return members{
		identify: func(ctx context.Context, cfg *rest.Config) (string, error) {
			cfg = rest.CopyConfig(cfg)
			cfg.Timeout = memberReachTimeout
			c, err := client.New(cfg, client.Options{})
			if err != nil {
				return "", err
			}
			ns := &corev1.Namespace{}
			if err := c.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns); err != nil {
				return "", err
			}
			return string(ns.UID), nil
		},
		register: membership.Register,
	}
}

func newJoinCommand(connect connector, m members, defaultImage string) *cobra.Command {
	var conn connection
	var kubeContext string
	var waitReady bool
	var timeout time.Duration
	var pull pullJoin
	cmd := &cobra.Command{
		Use:   "join NAME --kubeconfig FILE [--context CTX] [--mode push|pull] [--export]",
		Short: "Register an existing cluster with the hub as a Karmada member, push (the default) or pull (an agent in it), and wait until it is Ready",
		Long: `Join registers the cluster FILE (and --context) reaches as member NAME.

--mode push (the default), as karmadactl join does: in the cluster, namespace
karmada-cluster gets ServiceAccounts karmada-NAME (cluster admin, as
karmadactl's) and karmada-impersonator; on the hub, namespace karmada-cluster
gets Secret NAME (their token from the TokenRequest API, and the cluster's CA
bundle) and the cluster.karmada.io Cluster NAME points at it. The hub's
controller must reach the cluster at the server address FILE names. It refuses
a NAME already taken by another cluster, a cluster already joined under another
name, and a cluster it cannot reach. Joining the same cluster again renews its
credentials.

--mode pull, as karmadactl register does, for a cluster the hub cannot reach:
the hub gets the Cluster NAME in Pull mode (spec.syncMode: Pull) and a
ServiceAccount ` + membership.ClusterNamespace + `/` + membership.AgentName("NAME") + ` with rights over that
cluster alone (docs/pull-mode.md). The cluster gets, with server-side apply
(field manager ` + JoinFieldManager + `), the agent's manifests: namespace ` + install.Namespace + `;
ServiceAccount, ClusterRole and ClusterRoleBinding ` + install.AgentName + `, with every right
in the cluster, as karmada-agent's (the agent applies whatever its Works hold);
Secret ` + install.AgentHubKubeconfigSecret + `, a kubeconfig of the hub (the hub kubeconfig's server,
or --hub-api-endpoint where the cluster reaches the hub by another address; its
CA; a token of that ServiceAccount, valid up to a year); and Deployment
` + install.AgentName + ` running ` + "`federator agent`" + ` (--image, 2 replicas taking turns, probes on
port ` + fmt.Sprint(install.AgentProbePort) + `, metrics on ` + fmt.Sprint(install.AgentMetricsPort) + `). The cluster is checked first (a server-side dry
run), so what it refuses is refused before anything is written. The agent
reports the Cluster Ready. Joining again renews the token and the manifests;
federator unjoin NAME --cluster-kubeconfig FILE deletes them.

--export (with --mode pull) prints the agent's manifests as YAML, for
kubectl apply -f - or a GitOps repository, instead of writing them into the
cluster, and needs no --kubeconfig. It still registers NAME on the hub: the
token in the Secret comes from there. It does not wait.

The hub is --hub-kubeconfig, else --fleet, else $KUBECONFIG, as for the other
commands.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := membership.ValidName(name); err != nil {
				return err
			}
			pullMode, err := pull.check(name)
			if err != nil {
				return err
			}
			if pullMode {
				return pull.run(cmd, connect, conn, name, kubeContext, waitReady, timeout)
			}
			kubeconfig := pull.kubeconfig
			if kubeconfig == "" {
				return fmt.Errorf("join %s: --kubeconfig names the kubeconfig file of the cluster to join (the hub's is --hub-kubeconfig)", name)
			}
			cfg, where, err := memberConfig(kubeconfig, kubeContext)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			id, err := m.identify(ctx, cfg)
			if err != nil {
				return fmt.Errorf("cannot reach the cluster to join as %s at %s (%s): %v; check that its API server answers from here "+
					"(federator's controller on the hub must reach it at the same address) and that the kubeconfig's user may read namespace kube-system",
					name, cfg.Host, where, err)
			}
			h, err := connect(conn)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			renew, err := checkNameFree(ctx, h, name, id, cfg.Host, false)
			if err != nil {
				return err
			}
			if renew {
				fmt.Fprintf(out, "cluster %s is this cluster already: renewing its credentials\n", name)
			}
			if err := m.register(ctx, h.client, name, cfg); err != nil {
				return fmt.Errorf("join %s: %w", name, err)
			}
			fmt.Fprintf(out, "cluster %s joined: Cluster %s (push mode, %s), credentials in Secret %s/%s on the hub\n",
				name, name, cfg.Host, membership.ClusterNamespace, name)
			if !waitReady {
				return nil
			}
			return waitClusterReady(ctx, h, out, name, timeout, false)
		},
	}
	f := cmd.Flags()
	f.StringVar(&pull.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` of the cluster to join (required, but with --export)")
	f.StringVar(&kubeContext, "context", "", "context of --kubeconfig to use (default: its current context)")
	f.StringVar(&conn.kubeconfig, "hub-kubeconfig", "", "the hub's kubeconfig (default: --fleet's if given, else $KUBECONFIG, else .fleet/hub.kubeconfig if it exists, else ~/.kube/config)")
	f.StringVar(&conn.fleet, "fleet", defaultFleet, "a fleet `DIR` written by federator up --dir: use DIR/hub.kubeconfig as the hub's")
	f.StringVar(&conn.context, "hub-context", "", "context of the hub's kubeconfig to use (default: its current context)")
	conn.flags, conn.kubeconfigFlag = f, "hub-kubeconfig"
	f.BoolVar(&waitReady, "wait", true, "wait until the hub reports the Cluster Ready")
	f.DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the Cluster to be Ready")
	pull.addFlags(f, defaultImage)
	return cmd
}

// memberConfig is the client config of the cluster to join, with its CA
// read into the config: the hub is given the CA bundle, not a file path.
func memberConfig(kubeconfig, kubeContext string) (*rest.Config, string, error) {
	where := "--kubeconfig " + kubeconfig
	if kubeContext != "" {
		where += " --context " + kubeContext
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, where, fmt.Errorf("%s: %w", where, err)
	}
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return nil, where, fmt.Errorf("%s: %w", where, err)
	}
	if cfg.Insecure || len(cfg.CAData) == 0 {
		return nil, where, fmt.Errorf("%s: the kubeconfig gives no certificate authority for %s (insecure-skip-tls-verify, or none): "+
			"the hub reaches members over verified TLS, so join needs the cluster's CA in the kubeconfig (certificate-authority-data)", where, cfg.Host)
	}
	cfg.UserAgent = "federator-cli"
	return cfg, where, nil
}

// checkNameFree refuses name when another cluster holds it, and the
// cluster id when it is joined under another name. renew is true when name
// is this very cluster already.
// In Pull mode a Cluster NAME without an id is NAME too: registered, and
// no agent has reported its cluster's id yet.
func checkNameFree(ctx context.Context, h *hub, name, id, endpoint string, pull bool) (renew bool, err error) {
	clusters := &clusterv1alpha1.ClusterList{}
	if err := h.client.List(ctx, clusters); meta.IsNoMatchError(err) {
		return false, fmt.Errorf("the hub %s does not serve clusters.cluster.karmada.io: install federator there first (federator install)", h.host)
	} else if err != nil {
		return false, fmt.Errorf("listing the Clusters of the hub %s (kubeconfig %s): %w", h.host, h.kubeconfig, err)
	}
	for _, c := range clusters.Items {
		switch {
		case c.Name == name && (c.Spec.ID == id || pull && c.Spec.ID == ""):
			renew = true
		case c.Name == name:
			return false, fmt.Errorf("the name %s is taken: Cluster %s is another cluster (%s, id %s; this one is %s, id %s). "+
				"Join this one under another name, or run `federator unjoin %s` first if that cluster is gone",
				name, name, c.Spec.APIEndpoint, c.Spec.ID, endpoint, id, name)
		case c.Spec.ID == id:
			return false, fmt.Errorf("this cluster (%s, id %s) is joined already, as %s: a cluster joins once. "+
				"Run `federator unjoin %s` first to rename it", endpoint, id, c.Name, c.Name)
		}
	}
	return renew, nil
}

// waitClusterReady waits until the Cluster is Ready, as the hub's
// clusterStatus controller reports it (or, pull, the cluster's agent), and
// says what it saw when it gives up.
func waitClusterReady(ctx context.Context, h *hub, out io.Writer, name string, timeout time.Duration, pull bool) error {
	reporter := "federator's controller on the hub probes it"
	if pull {
		reporter = "its agent, Deployment " + install.Namespace + "/" + install.AgentName + " in " + name + ", reports it"
	}
	fmt.Fprintf(out, "waiting up to %s for Cluster %s to be Ready (%s)...\n", timeout, name, reporter)
	cluster := &clusterv1alpha1.Cluster{}
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		lastErr = h.client.Get(ctx, client.ObjectKey{Name: name}, cluster)
		return lastErr == nil && meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady), nil
	})
	if err == nil {
		fmt.Fprintf(out, "cluster %s is Ready (Kubernetes %s)\n", name, cluster.Status.KubernetesVersion)
		return nil
	}
	if lastErr != nil {
		return fmt.Errorf("the Cluster %s is not Ready after %s: %w", name, timeout, lastErr)
	}
	ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if pull {
		why := "no agent has reported it yet"
		if ready != nil {
			why = fmt.Sprintf("%s: %s", ready.Reason, ready.Message)
		}
		return fmt.Errorf("the Cluster %s is joined in Pull mode but not Ready after %s: %s. Its agent reports it: see "+
			"`kubectl -n %s get deployment,pods` and `kubectl -n %s logs deployment/%s` in %s; its pods must pull the image and reach the hub "+
			"at the server of Secret %s/%s there (join again with --hub-api-endpoint when they reach it by another address)",
			name, timeout, why, install.Namespace, install.Namespace, install.AgentName, name, install.Namespace, install.AgentHubKubeconfigSecret)
	}
	if ready == nil {
		return fmt.Errorf("the Cluster %s is joined but has no Ready condition after %s: is federator's controller running against this hub "+
			"(federator install, or federator controller)? Its clusterStatus controller sets it", name, timeout)
	}
	return fmt.Errorf("the Cluster %s is joined but not Ready after %s: %s: %s. The hub's controller reaches it at %s: that address must "+
		"answer from where the controller runs", name, timeout, ready.Reason, ready.Message, cluster.Spec.APIEndpoint)
}

// knownClusters lists the names a person may have meant.
func knownClusters(ctx context.Context, h *hub) string {
	clusters := &clusterv1alpha1.ClusterList{}
	if err := h.client.List(ctx, clusters); err != nil || len(clusters.Items) == 0 {
		return ""
	}
	var names []string
	for _, c := range clusters.Items {
		names = append(names, c.Name)
	}
	return "; joined: " + strings.Join(names, ", ")
}
