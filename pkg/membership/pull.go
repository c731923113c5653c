package membership

import (
	"context"
	"fmt"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

// Pull mode on the hub: a Pull cluster's Cluster, and the rights its agent
// needs there and no more. The hub never reaches the member.

// maxClusterName is Karmada's limit on a Cluster's name
// (pkg/apis/cluster/validation): its execution namespace,
// karmada-es-<name>, must stay a valid namespace name.
const maxClusterName = 48

// ValidName is nil for a name a Cluster may have, else why not.
func ValidName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("cluster name %q: %s", name, strings.Join(errs, "; "))
	}
	if len(name) > maxClusterName {
		return fmt.Errorf("cluster name %q: at most %d characters (Karmada's limit)", name, maxClusterName)
	}
	return nil
}

// AgentName is the name of what is cluster's agent's own: on the hub its
// ServiceAccount (in ClusterNamespace) and the roles and bindings that give
// it its rights; in the member the Lease its replicas take turns by (in
// --leader-elect-resource-namespace).
func AgentName(cluster string) string { return "federator-agent-" + cluster }

// agentRules are what a Pull cluster's agent may do cluster-wide: its own
// Cluster (read; its status and spec written), the Freezes (read: every
// dispatcher checks them), Events (those of a Cluster land in "default").
func agentRules(cluster string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters"}, ResourceNames: []string{cluster},
			Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters/status"}, ResourceNames: []string{cluster},
			Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{gatingv1alpha1.GroupVersion.Group}, Resources: []string{"freezes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
	}
}

// agentNamespaceRules are what it may do in its execution namespace: its
// Works and their status, and the tombstones of its deletion countdowns.
var agentNamespaceRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"work.karmada.io"}, Resources: []string{"works"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
	{APIGroups: []string{"work.karmada.io"}, Resources: []string{"works/status"}, Verbs: []string{"get", "update", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
}

// agentLeaseRules are what it may do in ClusterNamespace: renew its Lease
// (named after its cluster), which says it runs.
func agentLeaseRules(cluster string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, ResourceNames: []string{cluster},
			Verbs: []string{"get", "update", "patch"}},
	}
}

// RegisterPull registers cluster with the hub in Pull mode for an agent
// that reaches the hub as the ServiceAccount AgentName(cluster) in
// ClusterNamespace, with rights over nothing but that cluster: its Cluster,
// its execution namespace (Works, tombstones), its Lease, and reading the
// Freezes. It returns a token of that ServiceAccount from the TokenRequest
// API. The Cluster gets spec.syncMode Pull, created if missing; a Cluster
// of that name in Push mode is refused and left as it is. Everything it
// creates is owned by the Cluster, so deleting the Cluster collects it.
// Registering again renews the token.
func RegisterPull(ctx context.Context, hub client.Client, cluster string) (string, error) {
	if err := ValidName(cluster); err != nil {
		return "", err
	}
	wrap := func(err error) error { return fmt.Errorf("membership: registering %s in Pull mode: %w", cluster, err) }
	owner := &clusterv1alpha1.Cluster{}
	err := hub.Get(ctx, client.ObjectKey{Name: cluster}, owner)
	switch {
	case apierrors.IsNotFound(err):
		owner = &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster},
			Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
		if err := hub.Create(ctx, owner); err != nil {
			return "", wrap(err)
		}
	case err != nil:
		return "", wrap(err)
	case !Pull(owner):
		return "", &ModeError{Cluster: cluster, Registered: clusterv1alpha1.Push}
	}
	owned := func(o client.Object) error {
		labels := o.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[karmadaSystemLabel] = karmadaSystemLabelValue
		o.SetLabels(labels)
		return controllerutil.SetOwnerReference(owner, o, hub.Scheme())
	}
	for _, ns := range []string{ClusterNamespace, names.GenerateExecutionSpaceName(cluster)} {
		if err := ensureNamespace(ctx, hub, ns); err != nil {
			return "", wrap(err)
		}
	}
	sa, err := ensureServiceAccount(ctx, hub, AgentName(cluster))
	if err != nil {
		return "", wrap(err)
	}
	if err := owned(sa); err != nil {
		return "", wrap(err)
	}
	if err := hub.Update(ctx, sa); err != nil {
		return "", wrap(err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}
	name := AgentName(cluster)
	roleRef := func(kind string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	type write struct {
		obj    client.Object
		mutate func()
	}
	clusterRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
	clusterBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}
	writes := []write{
		{clusterRole, func() { clusterRole.Rules = agentRules(cluster) }},
		{clusterBinding, func() { clusterBinding.Subjects, clusterBinding.RoleRef = subject, roleRef("ClusterRole") }},
	}
	for ns, rules := range map[string][]rbacv1.PolicyRule{
		names.GenerateExecutionSpaceName(cluster): agentNamespaceRules,
		ClusterNamespace: agentLeaseRules(cluster),
	} {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		writes = append(writes, write{role, func() { role.Rules = rules }},
			write{binding, func() { binding.Subjects, binding.RoleRef = subject, roleRef("Role") }})
	}
	for _, w := range writes {
		if _, err := controllerutil.CreateOrUpdate(ctx, hub, w.obj, func() error {
			w.mutate()
			return owned(w.obj)
		}); err != nil {
			return "", wrap(err)
		}
	}
	token, _, err := RequestToken(ctx, hub, sa)
	if err != nil {
		return "", wrap(err)
	}
	return token, nil
}

// AgentConfig is how a Pull cluster's agent reaches the hub hub reaches:
// the same server and CA, as the agent's ServiceAccount (its token).
func AgentConfig(hub *rest.Config, token string) *rest.Config {
	return &rest.Config{Host: hub.Host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: hub.CAData, CAFile: hub.CAFile, ServerName: hub.ServerName, Insecure: hub.Insecure}}
}

// PullObjects are what RegisterPull creates on the hub for cluster's
// agent besides the namespaces: its ServiceAccount, roles and bindings.
// They are owned by the Cluster, so a hub's garbage collector deletes
// them with it; a hub that runs none (a bare API server) needs them
// deleted by whoever deletes the Cluster.
func PullObjects(cluster string) []client.Object {
	name := AgentName(cluster)
	out := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ClusterNamespace, Name: name}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}},
	}
	for _, ns := range []string{names.GenerateExecutionSpaceName(cluster), ClusterNamespace} {
		out = append(out, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	return out
}
