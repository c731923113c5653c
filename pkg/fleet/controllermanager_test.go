package fleet

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkServiceAccountTokens: in every cluster a ServiceAccount token Secret
// (what `karmadactl join` creates and waits for) gets a token, and the
// cluster's API server accepts that token: the controller manager signs
// with the key the API server verifies.
func checkServiceAccountTokens(ctx context.Context, t *testing.T, f *Fleet) {
	t.Helper()
	for _, c := range f.Clusters() {
		cl := newClient(t, c.Config, nil)
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "impersonator"}}
		if err := cl.Create(ctx, sa); err != nil {
			t.Fatal(err)
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "impersonator-token",
				Annotations: map[string]string{corev1.ServiceAccountNameKey: sa.Name}},
			Type: corev1.SecretTypeServiceAccountToken,
		}
		if err := cl.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
		var token []byte
		waitFor(ctx, t, time.Minute, c.Name+": token Secret filled by the token controller", func() bool {
			got := &corev1.Secret{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(secret), got); err != nil {
				return false
			}
			token = got.Data[corev1.ServiceAccountTokenKey]
			return len(token) > 0 && len(got.Data[corev1.ServiceAccountRootCAKey]) > 0
		})
		asSA := rest.AnonymousClientConfig(c.Config)
		asSA.BearerToken = string(token)
		review := &authenticationv1.SelfSubjectReview{}
		if err := newClient(t, asSA, nil).Create(ctx, review); err != nil {
			t.Fatalf("%s: the API server refuses the filled token: %v", c.Name, err)
		}
		if want := "system:serviceaccount:default:impersonator"; review.Status.UserInfo.Username != want {
			t.Errorf("%s: the token authenticates as %q, want %q", c.Name, review.Status.UserInfo.Username, want)
		}
	}
}

// checkWorkloadControllers: a Deployment in a member gets a ReplicaSet and
// Pods; the hub's stays a template (no ReplicaSet), as in Karmada.
func checkWorkloadControllers(ctx context.Context, t *testing.T, f *Fleet) {
	t.Helper()
	deployment := func() *appsv1.Deployment {
		replicas := int32(2)
		labels := map[string]string{"app": "web"}
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}},
				},
			},
		}
	}
	for _, c := range f.Clusters() {
		if err := newClient(t, c.Config, nil).Create(ctx, deployment()); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range f.Members {
		cl := newClient(t, m.Config, nil)
		waitFor(ctx, t, time.Minute, m.Name+": a ReplicaSet and 2 Pods for Deployment web", func() bool {
			var rs appsv1.ReplicaSetList
			var pods corev1.PodList
			return cl.List(ctx, &rs, client.InNamespace("default")) == nil && len(rs.Items) == 1 &&
				cl.List(ctx, &pods, client.InNamespace("default")) == nil && len(pods.Items) == 2
		})
	}
	// The members' controllers had their chance; the hub's, started at
	// the same time with the same client, would have acted by now.
	var rs appsv1.ReplicaSetList
	if err := newClient(t, f.Hub.Config, nil).List(ctx, &rs, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	if len(rs.Items) > 0 {
		t.Errorf("the hub runs a deployment controller: ReplicaSet %s exists; templates must stay templates", rs.Items[0].Name)
	}
}

func waitFor(ctx context.Context, t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
