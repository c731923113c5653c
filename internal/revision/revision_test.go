package revision

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func deployment(image string, annotations map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": "web", "namespace": "shop", "resourceVersion": "7", "generation": int64(3), "uid": "u1"}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
		"spec":   map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}}}},
		"status": map[string]any{"replicas": int64(2)},
	}}
}

func TestHashChangesWithContentOnly(t *testing.T) {
	base, err := Hash(deployment("nginx:1.25", nil))
	if err != nil {
		t.Fatal(err)
	}
	same := []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{"another status and resourceVersion", func() *unstructured.Unstructured {
			d := deployment("nginx:1.25", nil)
			d.Object["status"] = map[string]any{"replicas": int64(5)}
			d.SetResourceVersion("99")
			d.SetGeneration(9)
			return d
		}()},
		{"suspended", deployment("nginx:1.25", map[string]any{"propagation.federator.dev/suspended": "incident"})},
		{"suspended on one cluster", deployment("nginx:1.25", map[string]any{"suspended.propagation.federator.dev/member2": "true"})},
		{"a deletion delay", deployment("nginx:1.25", map[string]any{"federator.dev/deletion-delay": "10m"})},
		{"gated", deployment("nginx:1.25", map[string]any{"gating.federator.dev/gates": "approval"})},
		{"kubectl's last-applied copy", deployment("nginx:1.25", map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}"})},
	}
	for _, tc := range same {
		if got, _ := Hash(tc.obj); got != base {
			t.Errorf("%s: hash %s, want %s (no new revision)", tc.name, got, base)
		}
	}
	if got, _ := Hash(deployment("nginx:1.26", nil)); got == base {
		t.Errorf("a new image kept the hash %s", got)
	}
	if got, _ := Hash(deployment("nginx:1.25", map[string]any{"team": "a"})); got == base {
		t.Errorf("a new annotation that reaches members kept the hash %s", got)
	}
}

func TestStamp(t *testing.T) {
	for _, s := range []Stamp{
		{RolloutUID: "u-1", Revision: 4, Hash: "abc"},
		{RolloutUID: "u-1", Revision: 4, Hash: "abc", Clusters: map[string]string{"member2": "def", "member1": "123"}},
	} {
		got, ok := ParseStamp(s.String())
		if !ok || !reflect.DeepEqual(got, s) {
			t.Fatalf("ParseStamp(%q) = %+v, %v", s.String(), got, ok)
		}
		for cluster, want := range map[string]string{"member1": s.Clusters["member1"], "member3": "abc"} {
			if want == "" {
				want = "abc"
			}
			if h := got.HashFor(cluster); h != want {
				t.Errorf("%q: HashFor(%s) = %s, want %s", s.String(), cluster, h, want)
			}
		}
	}
	if v := (Stamp{RolloutUID: "u", Revision: 1, Hash: "h", Clusters: map[string]string{"b": "2", "a": "1"}}).String(); v != "u/1/h/a=1,b=2" {
		t.Errorf("String() = %q, want the clusters sorted", v)
	}
	for _, bad := range []string{"", "u/0/abc", "u/x/abc", "/1/abc", "u/1/", "u/1/a/b", "u/1/a/b/c", "u/1/a/m1=", "u/1/a/=h", "u/1/a/m1"} {
		if _, ok := ParseStamp(bad); ok {
			t.Errorf("ParseStamp(%q) read a stamp", bad)
		}
	}
}
