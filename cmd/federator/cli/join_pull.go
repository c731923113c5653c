package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/federator-dev/federator/config/install"
	"github.com/federator-dev/federator/pkg/membership"
)

// JoinFieldManager owns, in a Pull member, the agent's manifests that
// `federator join --mode pull` applies.
const JoinFieldManager = "federator-join"

// pullJoin is what `federator join --mode pull` is told: where the agent's
// manifests go (or --export), and what they say.
type pullJoin struct {
	flags *pflag.FlagSet
	mode  string
	// kubeconfig is the member's (--kubeconfig), in either mode.
	kubeconfig         string
	export             bool
	hubAPIEndpoint     string
	image              string
	clusterAPIEndpoint string
}

// pullOnlyFlags mean something in Pull mode alone.
var pullOnlyFlags = []string{"export", "hub-api-endpoint", "image", "cluster-api-endpoint"}

func (p *pullJoin) addFlags(f *pflag.FlagSet, defaultImage string) {
	p.flags = f
	f.StringVar(&p.mode, "mode", "push", "push: the hub's controller reaches the cluster and writes to it; "+
		"pull: an agent in the cluster reaches the hub and applies the cluster's Works (docs/pull-mode.md)")
	f.BoolVar(&p.export, "export", false, "with --mode pull: print the agent's manifests as YAML instead of writing them into the cluster; "+
		"NAME is still registered on the hub, which mints the agent's token")
	f.StringVar(&p.hubAPIEndpoint, "hub-api-endpoint", "", "with --mode pull: the hub API server's `URL` as the agent reaches it from the cluster "+
		"(default: the hub kubeconfig's server)")
	f.StringVar(&p.image, "image", defaultImage, "with --mode pull: the agent's image")
	f.StringVar(&p.clusterAPIEndpoint, "cluster-api-endpoint", "", "with --mode pull: the cluster's `URL` the agent registers on the hub "+
		"(default: --kubeconfig's server; with --export, the agent's in-cluster one)")
}

// check refuses flags that do not fit together, before anything is
// reached, and says whether join is in Pull mode.
func (p *pullJoin) check(name string) (pull bool, err error) {
	switch strings.ToLower(p.mode) {
	case "push":
		for _, flag := range pullOnlyFlags {
			if p.flags.Changed(flag) {
				return false, fmt.Errorf("join %s: --%s is for --mode pull, where an agent runs in the cluster; a Push member runs nothing of "+
					"federator, the hub's controller writes to it: add --mode pull, or drop --%s", name, flag, flag)
			}
		}
		return false, nil
	case "pull":
	default:
		return false, fmt.Errorf("join %s: --mode %q: push (the hub's controller reaches the cluster; the default) or pull "+
			"(an agent in the cluster reaches the hub)", name, p.mode)
	}
	switch {
	case p.export && p.kubeconfig != "":
		return true, fmt.Errorf("join %s: --export prints the agent's manifests instead of writing them into the cluster, so it reaches "+
			"no cluster: drop --kubeconfig (or --export to write them there)", name)
	case !p.export && p.kubeconfig == "":
		return true, fmt.Errorf("join %s --mode pull: --kubeconfig names the kubeconfig file of the cluster the agent's manifests go into "+
			"(the hub's is --hub-kubeconfig); or --export prints them, to apply where that cluster answers", name)
	case p.image == "":
		return true, fmt.Errorf("join %s: --image is empty: give the image of federator the agent runs", name)
	}
	for flag, value := range map[string]string{"hub-api-endpoint": p.hubAPIEndpoint, "cluster-api-endpoint": p.clusterAPIEndpoint} {
		if value == "" {
			continue
		}
		if u, err := url.Parse(value); err != nil || u.Scheme != "https" || u.Host == "" {
			return true, fmt.Errorf("join %s: --%s %q: give an API server's URL, e.g. https://10.89.0.2:6443", name, flag, value)
		}
	}
	return true, nil
}

// run registers name on the hub in Pull mode and writes (or prints) its
// agent's manifests. Whatever it refuses, it refuses before writing
// anything, on the hub or in the cluster.
func (p *pullJoin) run(cmd *cobra.Command, connect connector, conn connection, name, kubeContext string, waitReady bool, timeout time.Duration) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	if p.export && kubeContext != "" {
		return fmt.Errorf("join %s: --context names a context of --kubeconfig, which --export does not use: drop it", name)
	}
	var member *hub
	var id string
	if !p.export {
		var err error
		if member, err = connect(connection{kubeconfig: p.kubeconfig, context: kubeContext, kubeconfigFlag: "kubeconfig"}); err != nil {
			return err
		}
		ns := &corev1.Namespace{}
		if err := member.client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns); err != nil {
			return fmt.Errorf("cannot reach the cluster to join as %s at %s (--kubeconfig %s): %v; join writes the agent's manifests into it, "+
				"so its API server must answer from here (the hub need not reach it), and the kubeconfig's user may read namespace kube-system; "+
				"or --export prints the manifests, to apply where it answers", name, member.host, p.kubeconfig, err)
		}
		id = string(ns.UID)
	}
	h, err := connect(conn)
	if err != nil {
		return err
	}
	renew, err := p.checkHub(ctx, h, member, name, id)
	if err != nil {
		return err
	}
	server := p.hubAPIEndpoint
	if server == "" {
		server = h.host
	}
	// The hub's CA, checked before anything is registered.
	if _, err := controllerKubeconfig(h.config, server, ""); err != nil {
		return fmt.Errorf("join %s: the hub's kubeconfig %s: %w", name, h.kubeconfig, err)
	}
	opts := install.AgentOptions{ClusterName: name, Image: p.image, ClusterAPIEndpoint: p.clusterAPIEndpoint}
	if opts.ClusterAPIEndpoint == "" && member != nil {
		opts.ClusterAPIEndpoint = member.host
	}
	where := "cluster " + name
	if member != nil {
		// Whatever the cluster refuses (rights, admission), it refuses now.
		objs, err := install.AgentObjects(opts)
		if err != nil {
			return err
		}
		checkable, err := dryRunnable(ctx, member, objs)
		if err != nil {
			return fmt.Errorf("join %s: reading namespace %s in the cluster at %s: %w", name, install.Namespace, member.host, err)
		}
		if err := applyAs(ctx, out, member, where, JoinFieldManager, joinAdvice, checkable, true); err != nil {
			return fmt.Errorf("%w; nothing was changed, on the hub nor in %s", err, name)
		}
	}
	if renew {
		// Standard output is the manifests' alone with --export.
		say := out
		if p.export {
			say = cmd.ErrOrStderr()
		}
		fmt.Fprintf(say, "cluster %s is this cluster already: renewing its agent's token and manifests\n", name)
	}
	token, err := membership.RegisterPull(ctx, h.client, name)
	if err != nil {
		return fmt.Errorf("join %s: %w", name, err)
	}
	if opts.HubKubeconfig, err = controllerKubeconfig(h.config, server, token); err != nil {
		return fmt.Errorf("join %s: the hub's kubeconfig %s: %w", name, h.kubeconfig, err)
	}
	objs, err := install.AgentObjects(opts)
	if err != nil {
		return err
	}
	registered := fmt.Sprintf("Cluster %s registered on the hub %s in Pull mode; its agent reaches the hub at %s as ServiceAccount %s/%s, "+
		"with rights over %s alone (a token valid up to a year, in Secret %s/%s; join again renews it)",
		name, h.host, server, membership.ClusterNamespace, membership.AgentName(name), name, install.Namespace, install.AgentHubKubeconfigSecret)
	if p.export {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s. The agent's manifests follow on standard output: apply them in %s (kubectl apply -f -)\n", registered, name)
		manifests, err := install.YAML(objs)
		if err != nil {
			return err
		}
		_, err = out.Write(manifests)
		return err
	}
	if err := applyAs(ctx, out, member, where, JoinFieldManager, joinAdvice, objs, false); err != nil {
		return fmt.Errorf("%w; the Cluster is registered on the hub: join again once the cluster takes the manifests, "+
			"or unjoin %s", err, name)
	}
	fmt.Fprintf(out, "cluster %s joined: %s; its agent runs in %s as Deployment %s/%s\n", name, registered, name, install.Namespace, install.AgentName)
	if !waitReady {
		return nil
	}
	return waitClusterReady(ctx, h, out, name, timeout, true)
}

// checkHub refuses what the hub already holds under name, as join in
// Push mode does, and a hub that serves no Clusters. renew: name is this
// cluster already. With no member (--export) there is no cluster id to
// compare; RegisterPull refuses a Push cluster of that name.
func (p *pullJoin) checkHub(ctx context.Context, h *hub, member *hub, name, id string) (renew bool, err error) {
	if member != nil {
		return checkNameFree(ctx, h, name, id, member.host, true)
	}
	c := &clusterv1alpha1.Cluster{}
	switch err := h.client.Get(ctx, client.ObjectKey{Name: name}, c); {
	case meta.IsNoMatchError(err):
		return false, fmt.Errorf("the hub %s does not serve clusters.cluster.karmada.io: install federator there first (federator install)", h.host)
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading Cluster %s on the hub %s (kubeconfig %s): %w", name, h.host, h.kubeconfig, err)
	}
	return membership.Pull(c), nil
}

// dryRunnable are the objects of objs the cluster can check before any is
// written: a namespaced object cannot be checked in a namespace that is
// not there yet.
func dryRunnable(ctx context.Context, member *hub, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	err := member.client.Get(ctx, client.ObjectKey{Name: install.Namespace}, &corev1.Namespace{})
	if err == nil {
		return objs, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetNamespace() == "" {
			out = append(out, o)
		}
	}
	return out, nil
}

func joinAdvice(err error) string {
	return forbiddenAdviceFor("join --mode pull", "creates a ClusterRole over every resource, as karmada-agent's, and its binding", err)
}

// agentInMember are the agent's objects unjoin deletes from a Pull
// member: its manifests but the namespace (which may hold other things:
// federator's own controller, where the member is also the host), and
// the Lease its replicas took turns by.
func agentInMember(cluster string) ([]*unstructured.Unstructured, error) {
	objs, err := install.AgentObjects(install.AgentOptions{ClusterName: cluster, Image: "-"})
	if err != nil {
		return nil, err
	}
	lease := &unstructured.Unstructured{}
	lease.SetAPIVersion("coordination.k8s.io/v1")
	lease.SetKind("Lease")
	lease.SetNamespace(install.Namespace)
	lease.SetName(membership.AgentName(cluster))
	out := []*unstructured.Unstructured{lease}
	for _, o := range objs {
		if o.GetKind() != "Namespace" {
			out = append(out, o)
		}
	}
	return out, nil
}

// agentMember reaches the cluster whose agent unjoin deletes, and refuses,
// before anything is changed, a cluster that is not cluster's: a Push
// cluster has no agent, an unreachable one cannot be cleaned, and an
// agent there that serves another cluster is not this one's.
func agentMember(ctx context.Context, connect connector, agentIn connection, cluster *clusterv1alpha1.Cluster) (*hub, error) {
	name := cluster.Name
	if !membership.Pull(cluster) {
		mode := string(cluster.Spec.SyncMode)
		if mode == "" {
			mode = string(clusterv1alpha1.Push)
		}
		return nil, fmt.Errorf("unjoin %s: --cluster-kubeconfig deletes a Pull cluster's agent, and %s is in %s mode (spec.syncMode: %s): "+
			"no agent of federator runs there; drop --cluster-kubeconfig", name, name, mode, mode)
	}
	member, err := connect(agentIn)
	if err != nil {
		return nil, err
	}
	d := &appsv1.Deployment{}
	err = member.client.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.AgentName}, d)
	switch {
	case apierrors.IsNotFound(err):
		return member, nil
	case err != nil:
		return nil, fmt.Errorf("cannot reach the cluster at %s (--cluster-kubeconfig %s) to delete the agent of %s there: %v; nothing was changed. "+
			"Unjoin without --cluster-kubeconfig, then delete the agent where the cluster answers: %s",
			member.host, agentIn.kubeconfig, name, err, agentDeleteCommands(name))
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, arg := range c.Args {
			if served, ok := strings.CutPrefix(arg, "--cluster-name="); ok && served != name {
				return nil, fmt.Errorf("unjoin %s: Deployment %s/%s in the cluster at %s (--cluster-kubeconfig %s) is the agent of cluster %s, not %s: "+
					"is that the kubeconfig of %s? Nothing was changed", name, install.Namespace, install.AgentName, member.host, agentIn.kubeconfig,
					served, name, name)
			}
		}
	}
	return member, nil
}

// agentObjectList names the agent's objects in its cluster.
func agentObjectList(cluster string) string {
	return fmt.Sprintf("Deployment, ServiceAccount %s/%s, Secret %s/%s, Lease %s/%s, ClusterRole and ClusterRoleBinding %s",
		install.Namespace, install.AgentName, install.Namespace, install.AgentHubKubeconfigSecret, install.Namespace, membership.AgentName(cluster),
		install.AgentName)
}

// agentDeleteCommands delete the agent of cluster from it with kubectl.
func agentDeleteCommands(cluster string) string {
	return fmt.Sprintf("kubectl -n %s delete deployment/%s secret/%s serviceaccount/%s lease/%s; kubectl delete clusterrolebinding/%s clusterrole/%s",
		install.Namespace, install.AgentName, install.AgentHubKubeconfigSecret, install.AgentName, membership.AgentName(cluster),
		install.AgentName, install.AgentName)
}

func unjoinAdvice(err error) string {
	return forbiddenAdviceFor("unjoin --cluster-kubeconfig", "deletes a ClusterRole and its binding", err)
}

// kindOf is o's kind in h's scheme.
func kindOf(h *hub, o client.Object) string {
	gvk, err := apiutil.GVKForObject(o, h.client.Scheme())
	if err != nil {
		return fmt.Sprintf("%T", o)
	}
	return gvk.Kind
}
