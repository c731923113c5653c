package framework

import (
	"context"
	"fmt"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Container is the name of the one container of NewDeployment's pods, which
// SetImage changes.
const Container = "app"

// NewDeployment is a template as a person writes it: 2 replicas of one
// container running image, selected by label app=name.
func NewDeployment(ns, name, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: Container, Image: image}}},
			},
		},
	}
}

// NewDeploymentPolicy places the Deployment named deployment in ns (every
// Deployment of ns when it is "") on clusters.
func NewDeploymentPolicy(ns, name, deployment string, clusters ...string) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: deployment}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}},
		},
	}
}

// SuspendAll is a policy suspension holding every cluster.
func SuspendAll() *policyv1alpha1.Suspension {
	return &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}
}

// SuspendClusters is a policy suspension holding the clusters named.
func SuspendClusters(clusters ...string) *policyv1alpha1.Suspension {
	return &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: clusters}}
}

// Apply server-side applies obj (typed, of c's scheme) as fieldOwner, taking
// over fields others own, as `kubectl apply --server-side --force-conflicts`.
func Apply(ctx context.Context, c client.Client, obj client.Object, fieldOwner string) error {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return err
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetGroupVersionKind(gvk)
	// Zero values a typed object cannot leave out (creationTimestamp: null,
	// status: {}) would be claimed by this owner; they are no one's intent.
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// MergePatch merge-patches obj (its kind, namespace and name), as `kubectl
// patch --type merge`.
func MergePatch(ctx context.Context, c client.Client, obj client.Object, mergePatch string) error {
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(mergePatch)))
}

// PatchPolicy merge-patches the PropagationPolicy ns/name.
func PatchPolicy(ctx context.Context, c client.Client, ns, name, mergePatch string) error {
	return MergePatch(ctx, c, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, mergePatch)
}

// SetImage changes the image of a NewDeployment template, as `kubectl set
// image` does: one patch, no read.
func SetImage(ctx context.Context, c client.Client, ns, name, image string) error {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, Container, image)
	return c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)))
}

// CreateNamespace creates a hub namespace (namespace sync propagates it to
// every member); one that exists already is left as it is.
func (e *Env) CreateNamespace(ctx context.Context, ns string) error {
	return client.IgnoreAlreadyExists(e.Hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
}

// NamespaceInEveryMember holds once every member has namespace ns.
func (e *Env) NamespaceInEveryMember(ctx context.Context, ns string) error {
	for _, m := range e.MemberNames() {
		if err := e.Members[m].Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("namespace %s is not in %s yet", ns, m)
			}
			return fmt.Errorf("%s: %w", m, err)
		}
	}
	return nil
}
