package membership

import (
	"context"
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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
