package hubinstall

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/install/admission"
	"github.com/federator-dev/federator/config/install/crds"
)

// Install makes the hub serve what federator needs: the Karmada CRDs and
// the admission policies. Missing CRDs are created. CRDs the hub already
// has (a Karmada hub's own, which may carry more versions and a conversion
// webhook) keep all they have and get what federator needs added (the
// status subresource and schema fields federator's CRDs have, such as the
// policies' status): the report says what, and where the hub's RBAC
// forbade it. The admission policies are applied server-side, so an
// unchanged hub is not rewritten. It waits until the CRDs are established
// and the admission policies are enforced, so a hub reported ready already
// refuses bad input.
func Install(ctx context.Context, c client.Client) (InstallReport, error) {
	var report InstallReport
	crdList, err := crds.CRDs()
	if err != nil {
		return report, err
	}
	for _, crd := range crdList {
		live := &apiextensionsv1.CustomResourceDefinition{}
		err := c.Get(ctx, client.ObjectKeyFromObject(crd), live)
		if apierrors.IsNotFound(err) {
			err = c.Create(ctx, crd.DeepCopy())
			if apierrors.IsAlreadyExists(err) {
				err = c.Get(ctx, client.ObjectKeyFromObject(crd), live)
			}
		}
		if err == nil && live.Name != "" {
			var change *CRDChange
			if change, err = updateCRD(ctx, c, live, crd); change != nil {
				report.Changes = append(report.Changes, *change)
			}
		}
		if err != nil {
			return report, fmt.Errorf("install CustomResourceDefinition %s on the hub: %w", crd.Name, err)
		}
	}
	adm, err := admission.Objects()
	if err != nil {
		return report, err
	}
	for _, u := range adm {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner(policy.FieldManager), client.ForceOwnership); err != nil {
			return report, fmt.Errorf("install %s %s on the hub: %w", u.GetKind(), u.GetName(), err)
		}
	}
	if err := waitEstablished(ctx, c, crdList); err != nil {
		return report, err
	}
	return report, waitAdmissionEnforced(ctx, c)
}

// Verify checks, without changing anything, that the hub serves the CRDs
// federator needs (installed by its manifests, config/install): a missing
// CRD is an error that says how to install it; what an existing one lacks
// is reported as a change the controller was not allowed to make, so the
// controllers work with less (PolicyStatus) and say so.
func Verify(ctx context.Context, c client.Client) (InstallReport, error) {
	var report InstallReport
	crdList, err := crds.CRDs()
	if err != nil {
		return report, err
	}
	for _, crd := range crdList {
		live := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), live); apierrors.IsNotFound(err) {
			return report, fmt.Errorf("the hub has no CustomResourceDefinition %s and --install-crds=false: "+
				"install federator's manifests (`federator install`, or `kubectl apply -k config/install`), or run with --install-crds", crd.Name)
		} else if err != nil {
			return report, fmt.Errorf("reading CustomResourceDefinition %s on the hub: %w", crd.Name, err)
		}
		_, added, err := crdAdditions(live, crd)
		if err != nil {
			return report, err
		}
		if len(added) > 0 {
			report.Changes = append(report.Changes, CRDChange{Name: crd.Name, Added: added, Err: errNotInstalling})
		}
	}
	return report, waitEstablished(ctx, c, crdList)
}

// errNotInstalling is why Verify leaves a CRD lacking something as it is.
var errNotInstalling = errors.New("--install-crds=false")

func waitEstablished(ctx context.Context, c client.Client, crdList []*apiextensionsv1.CustomResourceDefinition) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
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
	if err != nil {
		return fmt.Errorf("the hub's CustomResourceDefinitions are not established after a minute: %w", err)
	}
	return nil
}

// waitAdmissionEnforced waits until the API server enforces the admission
// policies: it loads policies a moment after they are created. Each probe
// is a dry-run create of an object an admission policy refuses, so nothing
// is stored.
func waitAdmissionEnforced(ctx context.Context, c client.Client) error {
	policyProbe := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "federator-admission-probe"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
			Suspension: &policyv1alpha1.Suspension{
				Dispatching:           ptr.To(true),
				DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"federator-admission-probe"}},
			},
		},
	}
	annotationProbe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault,
		Name: "federator-admission-probe", Annotations: map[string]string{policy.SuspendedAnnotation: "false"}}}
	if err := waitRefused(ctx, c, policyProbe, admission.SuspensionPolicyName); err != nil {
		return err
	}
	return waitRefused(ctx, c, annotationProbe, admission.SuspensionAnnotationsPolicyName)
}

// waitRefused waits until the API server refuses probe by the admission
// policy policyName.
func waitRefused(ctx context.Context, c client.Client, probe client.Object, policyName string) error {
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lastErr = c.Create(ctx, probe.DeepCopyObject().(client.Object), client.DryRunAll)
		return lastErr != nil && strings.Contains(lastErr.Error(), policyName), nil
	})
	if err != nil {
		return fmt.Errorf("the hub does not enforce ValidatingAdmissionPolicy %s after a minute (last answer to an object it refuses: %v): check that the API server serves admissionregistration.k8s.io/v1: %w", policyName, lastErr, err)
	}
	return nil
}
