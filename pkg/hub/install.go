package hub

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/admission"
	"github.com/federator-dev/federator/config/crds"
)

// Install makes the hub serve what federator needs: the Karmada CRDs and
// the admission policies. It applies them server-side, so an unchanged hub
// is not rewritten, and waits until the CRDs are established.
func Install(ctx context.Context, c client.Client) error {
	crdList, err := crds.CRDs()
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for _, crd := range crdList {
		u := &unstructured.Unstructured{}
		if u.Object, err = runtime.DefaultUnstructuredConverter.ToUnstructured(crd); err != nil {
			return err
		}
		u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		objs = append(objs, u)
	}
	adm, err := admission.Objects()
	if err != nil {
		return err
	}
	for _, u := range append(objs, adm...) {
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner(policy.FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("install %s %s on the hub: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, crd := range crdList {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
				return false, nil
			}
			established := false
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					established = true
				}
			}
			if !established {
				return false, nil
			}
		}
		return true, nil
	})
}
