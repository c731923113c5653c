package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/pkg/membership"
)

func TestRegister(t *testing.T) {
	member := fake.NewClientBuilder().WithScheme(policy.NewScheme()).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "uid-of-edge1"}}).Build()
	for _, c := range []struct {
		name     string
		existing *clusterv1alpha1.Cluster
		// want is the Cluster's spec afterwards; wantErr a part of the error.
		want    clusterv1alpha1.ClusterSpec
		wantErr string
	}{
		{name: "a new cluster is registered in Pull mode, with its endpoint and ID",
			want: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, APIEndpoint: "https://edge1:6443", ID: "uid-of-edge1"}},
		{name: "a Pull cluster registered by the hub without an endpoint gets the agent's",
			existing: &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge1"},
				Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}},
			want: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, APIEndpoint: "https://edge1:6443", ID: "uid-of-edge1"}},
		{name: "a Pull cluster's endpoint, once set, is the hub's: the agent leaves it and sets only the ID",
			existing: &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge1"},
				Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, APIEndpoint: "https://old:6443"}},
			want: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, APIEndpoint: "https://old:6443", ID: "uid-of-edge1"}},
		{name: "a Push cluster of that name is refused and left as it is",
			existing: &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge1"},
				Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://10.0.0.1:6443",
					SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "edge1"}}},
			want: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://10.0.0.1:6443",
				SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "edge1"}},
			wantErr: "cluster edge1 is registered in Push mode (spec.syncMode: Push): the hub dispatches to it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(policy.NewScheme())
			if c.existing != nil {
				b = b.WithObjects(c.existing)
			}
			hub := b.Build()
			err := Register(context.Background(), hub, member, "edge1", "https://edge1:6443")
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("Register: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("Register: %v; want an error saying %q", err, c.wantErr)
			case c.wantErr != "" && !errors.As(err, new(*membership.ModeError)):
				t.Fatalf("Register: %T; want a membership.ModeError", err)
			}
			got := &clusterv1alpha1.Cluster{}
			if err := hub.Get(context.Background(), client.ObjectKey{Name: "edge1"}, got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.SyncMode != c.want.SyncMode || got.Spec.APIEndpoint != c.want.APIEndpoint || got.Spec.ID != c.want.ID ||
				(got.Spec.SecretRef == nil) != (c.want.SecretRef == nil) {
				t.Errorf("Cluster spec %+v; want %+v", got.Spec, c.want)
			}
		})
	}
}

var clustersResource = clusterv1alpha1.SchemeGroupVersion.WithResource("clusters").GroupResource()

// Two agents of one cluster start together (or the hub's controllers
// write the Cluster meanwhile): the one whose write meets the other's
// registers on the Cluster as it is now, rather than exit.
func TestRegisterMeetingAnotherWrite(t *testing.T) {
	member := fake.NewClientBuilder().WithScheme(policy.NewScheme()).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "uid-of-edge1"}}).Build()
	for _, c := range []struct {
		name     string
		existing []client.Object
		funcs    func() interceptor.Funcs
	}{
		{name: "the Cluster changed between the read and the patch",
			existing: []client.Object{&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge1"},
				Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}},
			funcs: func() interceptor.Funcs {
				conflicts := 1
				return interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if conflicts > 0 {
						conflicts--
						return apierrors.NewConflict(clustersResource, obj.GetName(), errors.New("the object has been modified"))
					}
					return c.Patch(ctx, obj, patch, opts...)
				}}
			}},
		{name: "the other agent created the Cluster between the read and the create",
			funcs: func() interceptor.Funcs {
				return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					other := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: obj.GetName()},
						Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, APIEndpoint: "https://edge1:6443", ID: "uid-of-edge1"}}
					if err := c.Create(ctx, other); err != nil {
						return err
					}
					return apierrors.NewAlreadyExists(clustersResource, obj.GetName())
				}}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(c.existing...).
				WithInterceptorFuncs(c.funcs()).Build()
			if err := Register(context.Background(), hub, member, "edge1", "https://edge1:6443"); err != nil {
				t.Fatalf("Register: %v", err)
			}
			got := &clusterv1alpha1.Cluster{}
			if err := hub.Get(context.Background(), client.ObjectKey{Name: "edge1"}, got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.SyncMode != clusterv1alpha1.Pull || got.Spec.APIEndpoint != "https://edge1:6443" || got.Spec.ID != "uid-of-edge1" {
				t.Errorf("Cluster spec %+v; want it registered in Pull mode with its endpoint and ID", got.Spec)
			}
		})
	}
}
