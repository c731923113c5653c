package membership

import (
	"context"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestConfigDialsOnlyWithTheClusterOwnCredentials: a Cluster whose
// spec.secretRef names a Secret made for another cluster (an agent's
// identity, or anyone, pointed edge1 at member1's credentials) gets no
// config: the hub would reach member1, or wherever edge1's endpoint says,
// with member1's token.
func TestConfigDialsOnlyWithTheClusterOwnCredentials(t *testing.T) {
	ownedBy := func(name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "Cluster", Name: name, UID: uid,
			Controller: ptr.To(true)}}
	}
	data := map[string][]byte{clusterv1alpha1.SecretTokenKey: []byte("token"), clusterv1alpha1.SecretCADataKey: []byte("ca")}
	for _, c := range []struct {
		name   string
		secret metav1.ObjectMeta
		// wantErr is a part of the refusal; "" when the hub may dial.
		wantErr string
	}{
		{name: "a Secret owned by the Cluster, as join and karmada-agent leave it",
			secret: metav1.ObjectMeta{Namespace: ClusterNamespace, Name: "edge1", OwnerReferences: ownedBy("edge1", "uid-edge1")}},
		{name: "a Secret written by hand, named after the cluster",
			secret: metav1.ObjectMeta{Namespace: "shop", Name: "edge1"}},
		{name: "another cluster's Secret, owned by it",
			secret:  metav1.ObjectMeta{Namespace: ClusterNamespace, Name: "member1", OwnerReferences: ownedBy("member1", "uid-member1")},
			wantErr: "cluster edge1: spec.secretRef names secret karmada-cluster/member1, which holds the credentials of cluster member1, not its own"},
		{name: "a Secret named after the cluster but owned by another",
			secret:  metav1.ObjectMeta{Namespace: ClusterNamespace, Name: "edge1", OwnerReferences: ownedBy("member1", "uid-member1")},
			wantErr: "which holds the credentials of cluster member1, not its own"},
		{name: "a Secret owned by an earlier Cluster of the same name",
			secret:  metav1.ObjectMeta{Namespace: ClusterNamespace, Name: "edge1", OwnerReferences: ownedBy("edge1", "uid-before")},
			wantErr: "is owned by an earlier Cluster edge1 (uid uid-before), not this one: register the cluster again"},
		{name: "a Secret owned by no Cluster and named otherwise",
			secret:  metav1.ObjectMeta{Namespace: ClusterNamespace, Name: "member1"},
			wantErr: "which is neither owned by Cluster edge1 nor named after it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			secret := &corev1.Secret{ObjectMeta: c.secret, Data: data}
			hub := fake.NewClientBuilder().WithObjects(secret).Build()
			cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge1", UID: "uid-edge1"},
				Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://edge1:6443",
					SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: c.secret.Namespace, Name: c.secret.Name}}}
			cfg, err := Config(context.Background(), hub, cluster)
			switch {
			case c.wantErr == "" && (err != nil || cfg.BearerToken != "token"):
				t.Fatalf("Config = %v, %v; want a config with the Secret's token", cfg, err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("Config = %v, %v; want no config and an error saying %q", cfg, err, c.wantErr)
			case c.wantErr != "" && cfg != nil:
				t.Fatalf("Config = %v with the refusal %v; want no config", cfg, err)
			}
		})
	}
}
