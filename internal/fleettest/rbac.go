package fleettest

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NoCRDUpdateUser is a hub user with every right federator's controller
// uses except updating or patching CustomResourceDefinitions: it may read
// and create them, as an operator who installs CRDs themselves may grant.
const NoCRDUpdateUser = "federator-no-crd-update"

// GrantAllButCRDUpdates gives NoCRDUpdateUser its rights on the hub c
// reaches (as an administrator) and returns cfg acting as that user.
func GrantAllButCRDUpdates(ctx context.Context, c client.Client, cfg *rest.Config) (*rest.Config, error) {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: NoCRDUpdateUser},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"", "apps", "batch", "policy.karmada.io", "work.karmada.io", "cluster.karmada.io",
				"gating.federator.dev", "rollouts.federator.dev", "admissionregistration.k8s.io", "events.k8s.io", "coordination.k8s.io",
				"scheduling.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"},
				Verbs: []string{"get", "list", "watch", "create"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: NoCRDUpdateUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: NoCRDUpdateUser}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := c.Create(ctx, o); err != nil {
			return nil, err
		}
	}
	limited := rest.CopyConfig(cfg)
	limited.Impersonate = rest.ImpersonationConfig{UserName: NoCRDUpdateUser}
	return limited, nil
}
