package crds

import (
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestCRDs(t *testing.T) {
	want := []struct {
		name           string
		scope          apiextensionsv1.ResourceScope
		servedVersions []string
		storageVersion string
		status         bool
	}{
		// Karmada's override policies have no status.
		{"clusteroverridepolicies.policy.karmada.io", apiextensionsv1.ClusterScoped, []string{"v1alpha1"}, "v1alpha1", false},
		{"clusterpropagationpolicies.policy.karmada.io", apiextensionsv1.ClusterScoped, []string{"v1alpha1"}, "v1alpha1", true},
		{"clusterresourcebindings.work.karmada.io", apiextensionsv1.ClusterScoped, []string{"v1alpha2"}, "v1alpha2", true},
		{"clusterrollouts.rollouts.federator.dev", apiextensionsv1.ClusterScoped, []string{"v1alpha1"}, "v1alpha1", true},
		{"clusters.cluster.karmada.io", apiextensionsv1.ClusterScoped, []string{"v1alpha1"}, "v1alpha1", true},
		{"freezes.gating.federator.dev", apiextensionsv1.ClusterScoped, []string{"v1alpha1"}, "v1alpha1", false},
		{"gates.gating.federator.dev", apiextensionsv1.NamespaceScoped, []string{"v1alpha1"}, "v1alpha1", true},
		{"overridepolicies.policy.karmada.io", apiextensionsv1.NamespaceScoped, []string{"v1alpha1"}, "v1alpha1", false},
		{"propagationpolicies.policy.karmada.io", apiextensionsv1.NamespaceScoped, []string{"v1alpha1"}, "v1alpha1", true},
		{"resourcebindings.work.karmada.io", apiextensionsv1.NamespaceScoped, []string{"v1alpha2"}, "v1alpha2", true},
		// Karmada's resource interpreter configuration: served for
		// karmada-agent, which waits for both (docs/pull-mode.md).
		{"resourceinterpretercustomizations.config.karmada.io", apiextensionsv1.ClusterScoped, []string{"v1alpha1"}, "v1alpha1", false},
		{"resourceinterpreterwebhookconfigurations.config.karmada.io", apiextensionsv1.ClusterScoped, []string{"v1alpha1"}, "v1alpha1", false},
		{"rollouts.rollouts.federator.dev", apiextensionsv1.NamespaceScoped, []string{"v1alpha1"}, "v1alpha1", true},
		{"works.work.karmada.io", apiextensionsv1.NamespaceScoped, []string{"v1alpha1"}, "v1alpha1", true},
	}

	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, crd := range crds {
		got = append(got, crd.Name)
	}
	var wantNames []string
	for _, w := range want {
		wantNames = append(wantNames, w.name)
	}
	if !slices.Equal(got, wantNames) {
		t.Fatalf("CRD names (sorted):\n got  %v\n want %v", got, wantNames)
	}

	for i, w := range want {
		crd := crds[i]
		t.Run(w.name, func(t *testing.T) {
			if crd.Spec.Scope != w.scope {
				t.Errorf("scope = %s, want %s", crd.Spec.Scope, w.scope)
			}
			var served, storage []string
			for _, v := range crd.Spec.Versions {
				if v.Served {
					served = append(served, v.Name)
				}
				if v.Storage {
					storage = append(storage, v.Name)
				}
				if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
					t.Errorf("version %s has no schema", v.Name)
				}
				hasStatus := v.Subresources != nil && v.Subresources.Status != nil
				if hasStatus != w.status {
					t.Errorf("version %s: status subresource = %v, want %v", v.Name, hasStatus, w.status)
				}
			}
			if !slices.Equal(served, w.servedVersions) {
				t.Errorf("served versions = %v, want %v", served, w.servedVersions)
			}
			if !slices.Equal(storage, []string{w.storageVersion}) {
				t.Errorf("storage versions = %v, want [%s]", storage, w.storageVersion)
			}
			if len(crd.Spec.Versions) != len(w.servedVersions) {
				t.Errorf("%d versions defined, want only the %d served", len(crd.Spec.Versions), len(w.servedVersions))
			}
		})
	}
}

// `kubectl get clusters` shows what Karmada's aggregated API shows.
func TestClusterPrinterColumns(t *testing.T) {
	all, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range all {
		if crd.Name != "clusters.cluster.karmada.io" {
			continue
		}
		var got []string
		for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			got = append(got, c.Name+"="+c.JSONPath)
		}
		want := []string{"VERSION=.status.kubernetesVersion", "MODE=.spec.syncMode",
			`READY=.status.conditions[?(@.type=="Ready")].status`, "AGE=.metadata.creationTimestamp"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("printer columns = %v, want %v", got, want)
		}
		return
	}
	t.Fatal("no clusters.cluster.karmada.io CRD")
}

// The suspension proposal's spellings are in the policy schemas as aliases
// (hack/crdpatch), so the API server stores them instead of pruning them.
func TestPolicySuspensionAliases(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, crd := range crds {
		if !strings.HasSuffix(crd.Name, "propagationpolicies.policy.karmada.io") {
			continue
		}
		checked++
		schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		suspension := schema.Properties["spec"].Properties["suspension"].Properties
		for _, field := range []string{"dispatching", "dispatchingOnClusters", "suspendDispatching", "suspendDispatchingOnClusters"} {
			if _, ok := suspension[field]; !ok {
				t.Errorf("%s: spec.suspension has no %s", crd.Name, field)
			}
		}
		if got := suspension["suspendDispatchingOnClusters"].Properties["clusterNames"].Type; got != "array" {
			t.Errorf("%s: spec.suspension.suspendDispatchingOnClusters.clusterNames has type %q, want array", crd.Name, got)
		}
		if _, ok := schema.Properties["status"].Properties["conditions"]; !ok {
			t.Errorf("%s: no status.conditions", crd.Name)
		}
	}
	if checked != 2 {
		t.Errorf("checked %d policy CRDs, want 2", checked)
	}
}
