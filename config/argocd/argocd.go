// Package argocd owns the Argo CD health checks shipped for federator's
// kinds and for Karmada's bindings on a federator hub: the Lua scripts
// beside it, which `kubectl apply --server-side -k config/argocd` adds to
// argocd-cm; Health, which runs one against an object as Argo CD does (gopher-lua, the interpreter Argo CD embeds, with
// the libraries Argo CD opens); and Reads, what Flux (kstatus) and Argo CD
// make of an object, so tests judge what those tools will show of the
// objects a real fleet wrote.
package argocd

import (
	"embed"
	"fmt"
	"slices"
	"sort"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

//go:embed *.lua
var scripts embed.FS

// scriptOf is the script of each group and kind, as kustomization.yaml
// names them in argocd-cm; TestKustomizeBuildsTheScripts keeps the two
// the same.
var scriptOf = map[schema.GroupKind]string{
	{Group: "rollouts.federator.dev", Kind: "Rollout"}:         "rollout.lua",
	{Group: "rollouts.federator.dev", Kind: "ClusterRollout"}:  "rollout.lua",
	{Group: "gating.federator.dev", Kind: "Gate"}:              "gate.lua",
	{Group: "work.karmada.io", Kind: "ResourceBinding"}:        "binding.lua",
	{Group: "work.karmada.io", Kind: "ClusterResourceBinding"}: "binding.lua",
}

// Key is the argocd-cm key of gk's health check.
func Key(gk schema.GroupKind) string {
	return fmt.Sprintf("resource.customizations.health.%s_%s", gk.Group, gk.Kind)
}

// Scripts are the health checks by argocd-cm key.
func Scripts() (map[string]string, error) {
	out := map[string]string{}
	for gk, file := range scriptOf {
		b, err := scripts.ReadFile(file)
		if err != nil {
			return nil, err
		}
		out[Key(gk)] = string(b)
	}
	return out, nil
}

// Kinds are the group kinds that have a health check, sorted.
func Kinds() []schema.GroupKind {
	var out []schema.GroupKind
	for gk := range scriptOf {
		out = append(out, gk)
	}
	sort.Slice(out, func(i, j int) bool { return Key(out[i]) < Key(out[j]) })
	return out
}

// Status is what a health check returns: Argo CD's health status
// (Healthy, Progressing, Suspended, Degraded, Missing, Unknown) and its
// message.
type Status struct {
	Status  string
	Message string
}

// Reads is what GitOps tools make of obj, of kind gvk: Flux's kstatus
// status and Argo CD's health from these scripts, as "<kstatus>/<health>"
// ("Current/Suspended"), and Argo CD's message.
func Reads(obj runtime.Object, gvk schema.GroupVersionKind) (string, string, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return "", "", err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	ks, err := status.Compute(u)
	if err != nil {
		return "", "", fmt.Errorf("kstatus of %s: %w", gvk.Kind, err)
	}
	health, err := Health(u)
	if err != nil {
		return "", "", err
	}
	return string(ks.Status) + "/" + health.Status, health.Message, nil
}

// statuses are the health statuses Argo CD takes from a script.
var statuses = []string{"Healthy", "Progressing", "Suspended", "Degraded", "Missing", "Unknown"}

// Health runs obj's health check as Argo CD runs it: obj is the global
// "obj", the script's return value the status.
func Health(obj *unstructured.Unstructured) (Status, error) {
	gk := obj.GroupVersionKind().GroupKind()
	file, ok := scriptOf[gk]
	if !ok {
		return Status{}, fmt.Errorf("no health check for %s", gk)
	}
	src, err := scripts.ReadFile(file)
	if err != nil {
		return Status{}, err
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	// The libraries Argo CD's util/lua opens for health scripts (it adds
	// a restricted os, which these scripts do not use).
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		l.Push(l.NewFunction(lib.open))
		l.Push(lua.LString(lib.name))
		l.Call(1, 0)
	}
	l.SetGlobal("obj", value(l, obj.Object))
	if err := l.DoString(string(src)); err != nil {
		return Status{}, fmt.Errorf("%s (%s): %w", file, gk, err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return Status{}, fmt.Errorf("%s (%s) returned %s, want a table", file, gk, l.Get(-1).Type())
	}
	st := Status{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}
	if !slices.Contains(statuses, st.Status) {
		// What Argo CD makes of a status it does not know.
		return Status{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
	}
	return st, nil
}

// value is v as Argo CD hands objects to Lua (its util/lua decodeValue):
// maps and lists become tables, numbers numbers, anything else nil.
func value(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, e := range v {
			t.RawSetString(k, value(l, e))
		}
		return t
	case []any:
		t := l.NewTable()
		for _, e := range v {
			t.Append(value(l, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	}
	return lua.LNil
}
