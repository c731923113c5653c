package membership

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
)

// TestConfigRefusesAPullCluster: the hub builds no client for a Pull
// cluster, even one whose credentials it holds.
func TestConfigRefusesAPullCluster(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ClusterNamespace, Name: "edge1"},
		Data: map[string][]byte{clusterv1alpha1.SecretTokenKey: []byte("t"), clusterv1alpha1.SecretCADataKey: []byte("ca")}}
	hub := fake.NewClientBuilder().WithObjects(secret).Build()
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge1"}, Spec: clusterv1alpha1.ClusterSpec{
		SyncMode: clusterv1alpha1.Pull, APIEndpoint: "https://edge1:6443",
		SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: ClusterNamespace, Name: "edge1"}}}
	cfg, err := Config(context.Background(), hub, cluster)
	if !errors.Is(err, ErrPullMode) || cfg != nil || !strings.Contains(err.Error(), "cluster edge1 is in Pull mode") {
		t.Fatalf("Config of a Pull cluster = %v, %v; want no config and ErrPullMode naming the cluster", cfg, err)
	}
	cluster.Spec.SyncMode = clusterv1alpha1.Push
	if cfg, err := Config(context.Background(), hub, cluster); err != nil || cfg.Host != "https://edge1:6443" {
		t.Fatalf("Config of the same cluster in Push mode = %v, %v; want its endpoint", cfg, err)
	}
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{"edge1": true, "Edge1": false, "edge_1": false, strings.Repeat("a", 48): true,
		strings.Repeat("a", 49): false, "": false} {
		if err := ValidName(name); (err == nil) != ok {
			t.Errorf("ValidName(%q) = %v; want valid %v", name, err, ok)
		}
	}
}

// TestRegisterPullRefusesAPushCluster: a cluster the hub dispatches to is
// not handed to an agent behind its back; nothing is created.
func TestRegisterPullRefusesAPushCluster(t *testing.T) {
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(&clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "edge1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}).Build()
	_, err := RegisterPull(context.Background(), hub, "edge1")
	if err == nil || !strings.Contains(err.Error(), "cluster edge1 is registered in Push mode") || !strings.Contains(err.Error(), "federator unjoin edge1") {
		t.Fatalf("RegisterPull of a Push cluster: %v; want a refusal saying how to change it", err)
	}
	sas := &corev1.ServiceAccountList{}
	if err := hub.List(context.Background(), sas); err != nil || len(sas.Items) != 0 {
		t.Errorf("ServiceAccounts after the refusal: %v, %v; want none", sas.Items, err)
	}
}

// TestPullObjectsAreWhatRegisterPullMakes: unjoin deletes PullObjects on a
// hub without a garbage collector; each one RegisterPull owns by the
// Cluster must be among them.
func TestPullObjectsAreWhatRegisterPullMakes(t *testing.T) {
	ctx := context.Background()
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).Build()
	if _, err := RegisterPull(ctx, hub, "edge1"); err != nil {
		t.Fatal(err)
	}
	owned := map[string]bool{}
	for _, list := range []client.ObjectList{&corev1.ServiceAccountList{}, &rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{},
		&rbacv1.RoleList{}, &rbacv1.RoleBindingList{}} {
		if err := hub.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			if len(obj.GetOwnerReferences()) > 0 {
				owned[fmt.Sprintf("%T %s/%s", obj, obj.GetNamespace(), obj.GetName())] = true
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	listed := map[string]bool{}
	for _, obj := range PullObjects("edge1") {
		listed[fmt.Sprintf("%T %s/%s", obj, obj.GetNamespace(), obj.GetName())] = true
	}
	if len(owned) == 0 || !maps.Equal(owned, listed) {
		t.Errorf("RegisterPull owns %v; PullObjects lists %v", slices.Sorted(maps.Keys(owned)), slices.Sorted(maps.Keys(listed)))
	}
}

// TestRegisterRefusesAPullClusterBeforeTheMember: registering in Push mode a
// name an agent serves is refused with the one wording of that refusal, and
// before the member is reached (this one cannot be: nothing listens there).
func TestRegisterRefusesAPullClusterBeforeTheMember(t *testing.T) {
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(&clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "edge1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}).Build()
	err := Register(context.Background(), hub, "edge1", &rest.Config{Host: "https://127.0.0.1:1"})
	var mode *ModeError
	if !errors.As(err, &mode) || mode.Registered != clusterv1alpha1.Pull ||
		!strings.Contains(err.Error(), "cluster edge1 is registered in Pull mode (spec.syncMode: Pull)") ||
		!strings.Contains(err.Error(), "federator unjoin edge1") {
		t.Fatalf("Register of a Pull cluster's name = %v; want a ModeError naming it and how to unregister it", err)
	}
}
