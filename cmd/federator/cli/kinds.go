package cli

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Karmada's kinds by the short names Karmada users type; resolved here so
// they work whatever the hub's discovery says.
var kindAliases = map[string]string{
	"pp":  "propagationpolicies.policy.karmada.io",
	"cpp": "clusterpropagationpolicies.policy.karmada.io",
	"rb":  "resourcebindings.work.karmada.io",
	"crb": "clusterresourcebindings.work.karmada.io",
}

const (
	kindPropagationPolicy        = "PropagationPolicy"
	kindClusterPropagationPolicy = "ClusterPropagationPolicy"
)

// kind is a resolved KIND argument.
type kind struct {
	gvk schema.GroupVersionKind
	// resource is "plural.group" ("deployments.apps"; "pods" for the core
	// group), as RBAC and kubectl name it.
	resource   string
	namespaced bool
}

// isPolicy reports whether k is one of Karmada's propagation policies.
func (k kind) isPolicy() bool {
	return k.gvk.Group == "policy.karmada.io" &&
		(k.gvk.Kind == kindPropagationPolicy || k.gvk.Kind == kindClusterPropagationPolicy)
}

// ref names the object of this kind in namespace (ignored when the kind
// is cluster-scoped).
func (k kind) ref(namespace, name string) ref {
	if !k.namespaced {
		namespace = ""
	}
	return ref{kind: k.gvk.Kind, namespace: namespace, name: name, resource: k.resource}
}

// resolveKind turns what a person typed (pp, cpp, deploy, deployment,
// Deployment, deployments.apps, deployments.v1.apps) into a kind the hub
// serves.
func (h *hub) resolveKind(arg string) (kind, error) {
	typed := strings.ToLower(strings.TrimSpace(arg))
	if typed == "" {
		return kind{}, fmt.Errorf("no kind given: name one, e.g. pp, cpp or deployment")
	}
	if alias, ok := kindAliases[typed]; ok {
		typed = alias
	}
	var gvk schema.GroupVersionKind
	var err error
	fullySpecified, groupResource := schema.ParseResourceArg(typed)
	if fullySpecified != nil {
		gvk, err = h.mapper.KindFor(*fullySpecified)
	}
	if gvk.Empty() {
		gvk, err = h.mapper.KindFor(groupResource.WithVersion(""))
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return kind{}, fmt.Errorf("unknown kind %q: the hub serves no such resource; use pp, cpp or a kind `kubectl api-resources` lists (e.g. deployment)", arg)
		}
		return kind{}, h.explain(err, "discover", ref{kind: arg})
	}
	mapping, err := h.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return kind{}, h.explain(err, "discover", ref{kind: arg})
	}
	return kind{gvk: gvk, resource: mapping.Resource.GroupResource().String(),
		namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace}, nil
}
