package cli

import (
	"strings"
	"testing"
)

func TestResolveKind(t *testing.T) {
	h := newTestHub(t)
	cases := []struct {
		typed, kind, resource string
		namespaced            bool
	}{
		{"pp", "PropagationPolicy", "propagationpolicies.policy.karmada.io", true},
		{"PP", "PropagationPolicy", "propagationpolicies.policy.karmada.io", true},
		{"cpp", "ClusterPropagationPolicy", "clusterpropagationpolicies.policy.karmada.io", false},
		{"propagationpolicy", "PropagationPolicy", "propagationpolicies.policy.karmada.io", true},
		{"deploy", "Deployment", "deployments.apps", true},
		{"deployment", "Deployment", "deployments.apps", true},
		{"Deployment", "Deployment", "deployments.apps", true},
		{"deployments.apps", "Deployment", "deployments.apps", true},
		{"deployments.v1.apps", "Deployment", "deployments.apps", true},
		{"cm", "ConfigMap", "configmaps", true},
		{"namespace", "Namespace", "namespaces", false},
	}
	for _, tc := range cases {
		t.Run(tc.typed, func(t *testing.T) {
			k, err := h.resolveKind(tc.typed)
			if err != nil {
				t.Fatal(err)
			}
			if k.gvk.Kind != tc.kind || k.resource != tc.resource || k.namespaced != tc.namespaced {
				t.Errorf("got %s (%s, namespaced %v), want %s (%s, namespaced %v)", k.gvk.Kind, k.resource, k.namespaced,
					tc.kind, tc.resource, tc.namespaced)
			}
			if got := k.isPolicy(); got != strings.HasSuffix(tc.kind, "PropagationPolicy") {
				t.Errorf("isPolicy %v", got)
			}
		})
	}
	for _, typed := range []string{"pipeline", "deployments.v9.apps", ""} {
		if _, err := h.resolveKind(typed); err == nil || !strings.Contains(err.Error(), "kind") {
			t.Errorf("%q: error %v, want one about the kind", typed, err)
		}
	}
}
