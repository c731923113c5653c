package hubinstall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
)

// CRDChange is what a CustomResourceDefinition already on the hub lacked
// of what federator needs: Added names each piece ("status subresource",
// ".spec.suspension.suspendDispatching", ...). Err is set when the hub
// refused the update (its RBAC forbids it): the CRD is left as it was.
type CRDChange struct {
	Name  string
	Added []string
	Err   error
}

// StatusSubresource is how Added names the status subresource.
const StatusSubresource = "status subresource"

// Message says what was added to the CRD, or what could not be and what a
// person can do.
func (c CRDChange) Message() string {
	var parts []string
	var fields []string
	for _, a := range c.Added {
		if a == StatusSubresource {
			parts = append(parts, StatusSubresource)
		} else {
			fields = append(fields, a)
		}
	}
	if len(fields) > 0 {
		parts = append(parts, "schema fields "+strings.Join(fields, ", "))
	}
	what := strings.Join(parts, " and ")
	if c.Err == nil {
		return fmt.Sprintf("%s added to %s", what, c.Name)
	}
	if errors.Is(c.Err, errNotInstalling) {
		return fmt.Sprintf("%s lacks %s, and the controller runs with --install-crds=false; federator works without them: %s. "+
			"Update the CRDs with `federator install` (or kubectl apply --server-side -k config/install)", c.Name, what, c.consequence())
	}
	return fmt.Sprintf("cannot add %s to %s (%v); federator works without them: %s. "+
		"Grant the controller update and patch on customresourcedefinitions, or apply federator's CRDs (config/install/crds) yourself",
		what, c.Name, c.Err, c.consequence())
}

func (c CRDChange) consequence() string {
	var out []string
	for _, a := range c.Added {
		if a == StatusSubresource && policyCRD(c.Name) {
			out = append(out, "policies get no status conditions (ClustersKnown, SchedulePriorityResolved); their Warning Events are still sent")
			break
		}
	}
	out = append(out, "fields the hub's schema lacks are dropped from what it stores")
	return strings.Join(out, "; ")
}

func policyCRD(name string) bool {
	return name == "propagationpolicies.policy.karmada.io" || name == "clusterpropagationpolicies.policy.karmada.io"
}

// InstallReport is what Install did to CRDs the hub already had.
type InstallReport struct {
	Changes []CRDChange
}

// PolicyStatus reports whether the hub serves the policies' status: false
// when the status subresource could not be added to a policy CRD.
func (r InstallReport) PolicyStatus() bool {
	for _, c := range r.Changes {
		if c.Err != nil && policyCRD(c.Name) {
			for _, a := range c.Added {
				if a == StatusSubresource {
					return false
				}
			}
		}
	}
	return true
}

// updateCRD adds to live, a CRD the hub already has, what want (federator's
// own) has and live lacks, with a server-side apply under federator's field
// manager: the status subresource and missing schema fields of each version
// federator uses. Nothing of live's is removed or changed (a Karmada hub's
// CRDs carry more versions, a conversion webhook, perhaps newer fields). It
// returns nil when live lacks nothing; a change with Err set when the hub
// forbids the update.
func updateCRD(ctx context.Context, c client.Client, live, want *apiextensionsv1.CustomResourceDefinition) (*CRDChange, error) {
	versions, added, err := crdAdditions(live, want)
	if err != nil || len(added) == 0 {
		return nil, err
	}
	change := &CRDChange{Name: live.Name, Added: added}
	// spec.versions is an atomic list: the apply states it whole, as live
	// has it plus the additions.
	raw, err := json.Marshal(versions)
	if err != nil {
		return nil, err
	}
	var versionList []any
	if err := json.Unmarshal(raw, &versionList); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiextensionsv1.SchemeGroupVersion.String(),
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": live.Name},
		"spec":       map[string]any{"versions": versionList},
	}}
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(policy.FieldManager), client.ForceOwnership)
	switch {
	case apierrors.IsForbidden(err):
		change.Err = err
	case err != nil:
		return nil, fmt.Errorf("update CustomResourceDefinition %s on the hub (adding %s): %w", live.Name, strings.Join(added, ", "), err)
	}
	return change, nil
}

// crdAdditions returns live's versions with what want needs added, and
// names each addition. A version of want that live does not serve is an
// error: federator reads and writes that version.
func crdAdditions(live, want *apiextensionsv1.CustomResourceDefinition) ([]apiextensionsv1.CustomResourceDefinitionVersion, []string, error) {
	versions := make([]apiextensionsv1.CustomResourceDefinitionVersion, len(live.Spec.Versions))
	for i := range live.Spec.Versions {
		live.Spec.Versions[i].DeepCopyInto(&versions[i])
	}
	var added []string
	for _, w := range want.Spec.Versions {
		i := -1
		for j := range versions {
			if versions[j].Name == w.Name && versions[j].Served {
				i = j
			}
		}
		if i < 0 {
			return nil, nil, fmt.Errorf("CustomResourceDefinition %s on the hub does not serve %s, which federator reads and writes: "+
				"serve that version (federator's own is in config/install/crds)", live.Name, w.Name)
		}
		v := &versions[i]
		if w.Subresources != nil && w.Subresources.Status != nil && (v.Subresources == nil || v.Subresources.Status == nil) {
			if v.Subresources == nil {
				v.Subresources = &apiextensionsv1.CustomResourceSubresources{}
			}
			v.Subresources.Status = &apiextensionsv1.CustomResourceSubresourceStatus{}
			added = append(added, StatusSubresource)
		}
		if w.Schema != nil && w.Schema.OpenAPIV3Schema != nil && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			added = append(added, addMissingFields("", v.Schema.OpenAPIV3Schema, w.Schema.OpenAPIV3Schema)...)
		}
	}
	return versions, added, nil
}

// addMissingFields adds to live the properties of want it lacks, at any
// depth, and returns their paths (".status", ".spec.suspension.x").
func addMissingFields(path string, live, want *apiextensionsv1.JSONSchemaProps) []string {
	if live.Type != want.Type {
		return nil
	}
	var added []string
	names := make([]string, 0, len(want.Properties))
	for name := range want.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		w := want.Properties[name]
		l, ok := live.Properties[name]
		if !ok {
			if live.Properties == nil {
				live.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
			}
			live.Properties[name] = *w.DeepCopy()
			added = append(added, path+"."+name)
			continue
		}
		added = append(added, addMissingFields(path+"."+name, &l, &w)...)
		live.Properties[name] = l
	}
	if want.Items != nil && want.Items.Schema != nil && live.Items != nil && live.Items.Schema != nil {
		added = append(added, addMissingFields(path+"[]", live.Items.Schema, want.Items.Schema)...)
	}
	return added
}
