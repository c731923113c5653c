package dispatch

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(labels, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cfg", "namespace": "shop"}}}
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	return u
}

func withData(u *unstructured.Unstructured, v string) *unstructured.Unstructured {
	u.Object["data"] = map[string]any{"level": v}
	return u
}

func withExtra(u *unstructured.Unstructured) *unstructured.Unstructured {
	u.Object["data"].(map[string]any)["defaulted"] = "by the member"
	return u
}

// withResources gives u a container with cpu and memory limits.
func withResources(u *unstructured.Unstructured, cpu, memory string) *unstructured.Unstructured {
	u.Object["spec"] = map[string]any{"containers": []any{map[string]any{"name": "app",
		"resources": map[string]any{"limits": map[string]any{"cpu": cpu, "memory": memory}}}}}
	return u
}

func TestContains(t *testing.T) {
	for _, tc := range []struct {
		name       string
		have, want any
		ok         bool
	}{
		{"equal scalars", "a", "a", true},
		{"different scalars", "a", "b", false},
		{"int64 and float64 of one value", float64(2), int64(2), true},
		{"extra keys in have", map[string]any{"a": "1", "b": "2"}, map[string]any{"a": "1"}, true},
		{"missing key in have", map[string]any{"b": "2"}, map[string]any{"a": "1"}, false},
		{"nil wanted and absent", map[string]any{}, map[string]any{"a": nil}, true},
		{"lists item by item", []any{map[string]any{"name": "c", "image": "x", "defaulted": true}},
			[]any{map[string]any{"name": "c", "image": "x"}}, true},
		{"lists of other length", []any{"a", "b"}, []any{"a"}, false},
		{"changed list item", []any{map[string]any{"image": "y"}}, []any{map[string]any{"image": "x"}}, false},
		{"type mismatch", "a", map[string]any{}, false},
		// The member API server returns a quantity in its canonical form.
		{"cpu 0.5 stored as 500m", "500m", "0.5", true},
		{"cpu 0.5 as a JSON number stored as 500m", "500m", float64(0.5), true},
		{"cpu 2 as a JSON number stored as 2", "2", int64(2), true},
		{"memory 1024Mi stored as 1Gi", "1Gi", "1024Mi", true},
		{"memory 1Gi edited to 2Gi", "2Gi", "1Gi", false},
		{"cpu 500m edited to 0.5 (not the server's spelling)", "0.5", "500m", false},
		{"a version string is not a quantity", "1.1", "1.10", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := contains(tc.have, tc.want); got != tc.ok {
				t.Errorf("contains = %v, want %v", got, tc.ok)
			}
		})
	}
}

func TestWriteDecision(t *testing.T) {
	managed := map[string]string{"karmada.io/managed": "true"}
	abort := map[string]string{"work.karmada.io/conflict-resolution": "abort"}
	overwrite := map[string]string{"work.karmada.io/conflict-resolution": "overwrite"}
	stamped := func(h string) map[string]string {
		return map[string]string{"work.federator.dev/applied-hash": h, "work.karmada.io/conflict-resolution": "abort"}
	}
	for _, tc := range []struct {
		name      string
		desired   *unstructured.Unstructured
		existing  *unstructured.Unstructured
		wantWrite bool
		wantErr   string
	}{
		{"absent is created", obj(nil, abort), nil, true, ""},
		{"managed and same hash is not written", obj(nil, abort), obj(managed, stamped("h1")), false, ""},
		{"managed, same hash, but changed in the member is written", withData(obj(nil, abort), "a"),
			withData(obj(managed, stamped("h1")), "edited"), true, ""},
		{"managed, same hash, member has extra defaults: not written", withData(obj(nil, abort), "a"),
			withExtra(withData(obj(managed, stamped("h1")), "a")), false, ""},
		{"managed, same hash, member spells quantities canonically: not written",
			withResources(obj(nil, abort), "0.5", "1024Mi"), withResources(obj(managed, stamped("h1")), "500m", "1Gi"), false, ""},
		{"managed, same hash, member's limit raised: written",
			withResources(obj(nil, abort), "0.5", "1024Mi"), withResources(obj(managed, stamped("h1")), "500m", "2Gi"), true, ""},
		{"managed and other hash is written", obj(nil, abort), obj(managed, stamped("h0")), true, ""},
		{"managed without hash is written", obj(nil, abort), obj(managed, nil), true, ""},
		{"foreign object with abort is refused", obj(nil, abort), obj(nil, nil), false, "already exists in the cluster member1"},
		{"foreign object with overwrite is taken over", obj(nil, overwrite), obj(nil, nil), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write, err := writeDecision(tc.desired, tc.existing, "h1", "member1")
			if write != tc.wantWrite {
				t.Errorf("write = %v, want %v", write, tc.wantWrite)
			}
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestDesiredHashFollowsContent(t *testing.T) {
	a, _ := desiredHash(obj(map[string]string{"app": "web"}, nil))
	b, _ := desiredHash(obj(map[string]string{"app": "web"}, nil))
	c, _ := desiredHash(obj(map[string]string{"app": "api"}, nil))
	if a != b {
		t.Errorf("same content, different hashes %s %s", a, b)
	}
	if a == c {
		t.Errorf("different content, same hash %s", a)
	}
}
