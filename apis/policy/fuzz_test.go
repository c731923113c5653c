package policy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// FuzzFoldAliases: the proposal's spellings of spec.suspension
// (suspendDispatching, suspendDispatchingOnClusters) folded into Karmada's,
// from a policy as stored. The fold fails safe: every cluster is suspended
// when either spelling says so, every cluster either list names stays
// listed, once; folding twice is folding once; the typed spec it starts
// from is not changed; and a policy without aliases comes back as it is.
// suspension is spec.suspension as JSON, as the fuzzer mutates it; when it
// is no JSON object the two spellings are built from the other inputs
// (a boolean: 0 absent, 1 false, 2 true; a list: "-" absent, else
// comma-separated names).
func FuzzFoldAliases(f *testing.F) {
	f.Add("", uint8(0), uint8(2), "-", "member2,member3")
	f.Add("", uint8(1), uint8(2), "member1", "-")
	f.Add("", uint8(2), uint8(1), "-", "")
	f.Add("", uint8(0), uint8(0), "member1,member2", "member3,member1,member3")
	f.Add(`{"suspendDispatchingOnClusters":{}}`, uint8(0), uint8(0), "-", "-")
	f.Add(`{"dispatching":false,"suspendDispatching":true}`, uint8(0), uint8(0), "-", "-")
	f.Add(`{"suspendDispatching":"true"}`, uint8(0), uint8(0), "-", "-")
	f.Add(`{"suspendDispatchingOnClusters":{"clusterNames":"member1"}}`, uint8(0), uint8(0), "-", "-")
	f.Add(`{"dispatchingOnClusters":{"clusterNames":[1]}}`, uint8(0), uint8(0), "-", "-")
	f.Fuzz(func(t *testing.T, suspension string, releasedAll, aliasAll uint8, releasedList, aliasList string) {
		s := map[string]any{}
		if err := json.Unmarshal([]byte(suspension), &s); err != nil || s == nil {
			s = map[string]any{}
			setBool := func(key string, v uint8) {
				if v%3 != 0 {
					s[key] = v%3 == 2
				}
			}
			setList := func(key, v string) {
				if v == "-" {
					return
				}
				names := []any{}
				for _, n := range strings.Split(v, ",") {
					if n != "" {
						// What the API server stores is JSON: valid UTF-8.
						names = append(names, strings.ToValidUTF8(n, "\uFFFD"))
					}
				}
				s[key] = map[string]any{"clusterNames": names}
			}
			setBool("dispatching", releasedAll)
			setBool(AliasSuspendDispatching, aliasAll)
			setList("dispatchingOnClusters", releasedList)
			setList(AliasSuspendDispatchingOnClusters, aliasList)
		}
		stored := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
			"metadata": map[string]any{"name": "web", "namespace": "shop"},
			"spec":     map[string]any{"suspension": s},
		}}
		spec, err := StoredSpec(stored.DeepCopy())
		if err != nil {
			// Only a released field of the wrong type is refused (the
			// typed read); the hub's CRDs refuse such a policy anyway.
			if !strings.Contains(err.Error(), "PropagationPolicy web: reading its spec") {
				t.Fatalf("refusal %q does not name the policy and what failed", err)
			}
			return
		}
		// The typed read, as the detector's cache gives it: aliases dropped.
		typed := &policyv1alpha1.PropagationSpec{}
		if err := (json.Unmarshal(mustJSON(t, map[string]any{"suspension": s}), typed)); err != nil {
			return
		}
		before := typed.DeepCopy()
		folded := FoldAliases(typed, stored)
		if !equality.Semantic.DeepEqual(typed, before) {
			t.Fatalf("FoldAliases changed the spec it was given: %+v, was %+v", typed, before)
		}
		if again := FoldAliases(folded, stored); !equality.Semantic.DeepEqual(again, folded) {
			t.Fatalf("folding twice gives %+v, once %+v", again.Suspension, folded.Suspension)
		}
		if !equality.Semantic.DeepEqual(folded, spec) {
			t.Fatalf("StoredSpec = %+v, FoldAliases over the typed read = %+v", spec.Suspension, folded.Suspension)
		}
		_, hasAliasAll := s[AliasSuspendDispatching]
		_, hasAliasList := s[AliasSuspendDispatchingOnClusters]
		if !hasAliasAll && !hasAliasList && folded != typed {
			t.Fatalf("a policy without aliases was copied")
		}

		// Fail safe: what either spelling suspends stays suspended.
		got := folded.Suspension
		if (s["dispatching"] == true || s[AliasSuspendDispatching] == true) && (got == nil || !ptr.Deref(got.Dispatching, false)) {
			t.Fatalf("suspension %v: every cluster is to be suspended, folded into %+v", s, got)
		}
		var gotNames []string
		if got != nil && got.DispatchingOnClusters != nil {
			gotNames = got.DispatchingOnClusters.ClusterNames
		}
		for _, key := range []string{"dispatchingOnClusters", AliasSuspendDispatchingOnClusters} {
			list, ok, _ := unstructured.NestedStringSlice(s, key, "clusterNames")
			if !ok {
				continue
			}
			for _, name := range list {
				if !slices.Contains(gotNames, name) {
					t.Fatalf("%s lists %q, folded into %q", key, name, gotNames)
				}
			}
		}
		var releasedNames []string
		if before.Suspension != nil && before.Suspension.DispatchingOnClusters != nil {
			releasedNames = before.Suspension.DispatchingOnClusters.ClusterNames
		}
		if aliasNames, ok, _ := unstructured.NestedStringSlice(s, AliasSuspendDispatchingOnClusters, "clusterNames"); ok {
			for _, name := range aliasNames {
				// Added once, unless the released list has it already.
				if n := countOf(gotNames, name); n != max(1, countOf(releasedNames, name)) {
					t.Fatalf("%q listed %d times after folding: %q", name, n, gotNames)
				}
			}
		}
	})
}

func countOf(names []string, name string) (n int) {
	for _, x := range names {
		if x == name {
			n++
		}
	}
	return n
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
