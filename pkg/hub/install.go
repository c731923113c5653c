package hub

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/admission"
	"github.com/federator-dev/federator/config/crds"
)

// Install makes the hub serve what federator needs: the Karmada CRDs and
// the admission policies. CRDs the hub already has are left as they are (a
// Karmada hub's own may carry more versions and a conversion webhook);
// missing ones are created. The admission policies are applied server-side,
// so an unchanged hub is not rewritten. It waits until the CRDs are
// established.
func Install(ctx context.Context, c client.Client) error {
	crdList, err := crds.CRDs()
	if err != nil {
		return err
	}
	for _, crd := range crdList {
		err := c.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{})
		if apierrors.IsNotFound(err) {
			err = c.Create(ctx, crd.DeepCopy())
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("install CustomResourceDefinition %s on the hub: %w", crd.Name, err)
		}
	}
	adm, err := admission.Objects()
	if err != nil {
		return err
	}
	for _, u := range adm {
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
