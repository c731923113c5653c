package finalizers

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const ours, theirs = "federator.dev/ours", "example.com/theirs"

// A patch from a read that the API server has moved past since is refused
// with a conflict and writes nothing; from a fresh read it writes exactly
// the one change, whatever else is on the list.
func TestPatchFromAStaleReadKeepsAnotherControllersFinalizer(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		stored []string                // the finalizers when the controller reads
		since  func(*corev1.ConfigMap) // what another controller writes after that read
		want   []string                // stored once the change is made from a fresh read
	}{
		{name: "add, another finalizer added since the read",
			since: func(cm *corev1.ConfigMap) { cm.Finalizers = append(cm.Finalizers, theirs) },
			want:  []string{theirs, ours}},
		{name: "remove, another finalizer added since the read", stored: []string{ours},
			since: func(cm *corev1.ConfigMap) { cm.Finalizers = append(cm.Finalizers, theirs) },
			want:  []string{theirs}},
		{name: "remove, another finalizer removed by its owner since the read", stored: []string{theirs, ours},
			since: func(cm *corev1.ConfigMap) { cm.Finalizers = []string{ours} },
			want:  nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", Finalizers: tc.stored}}).Build()
			key := client.ObjectKey{Namespace: "ns", Name: "cm"}
			write := Remove
			if !slices.Contains(tc.stored, ours) {
				write = Add
			}
			read := &corev1.ConfigMap{}
			if err := c.Get(ctx, key, read); err != nil {
				t.Fatal(err)
			}
			other := read.DeepCopy()
			tc.since(other)
			if err := c.Update(ctx, other); err != nil {
				t.Fatal(err)
			}
			if err := write(ctx, c, read, ours); !apierrors.IsConflict(err) {
				t.Errorf("from the stale read: err = %v, want a conflict", err)
			}
			stored := &corev1.ConfigMap{}
			if err := c.Get(ctx, key, stored); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(stored.Finalizers, other.Finalizers) {
				t.Errorf("from the stale read: stored finalizers %q, want %q, as the other controller left them", stored.Finalizers, other.Finalizers)
			}
			if err := write(ctx, c, stored, ours); err != nil {
				t.Fatalf("from a fresh read: %v", err)
			}
			if err := c.Get(ctx, key, stored); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(stored.Finalizers, tc.want) {
				t.Errorf("from a fresh read: stored finalizers %q, want %q", stored.Finalizers, tc.want)
			}
		})
	}
}
