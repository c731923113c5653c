package revision

import (
	"errors"
	"testing"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// image overrides the image for the clusters listed, as an OverridePolicy
// whose rules target them would.
func image(byCluster map[string]string) func(m *unstructured.Unstructured, cluster string) (map[string]string, error) {
	return func(m *unstructured.Unstructured, cluster string) (map[string]string, error) {
		img, ok := byCluster[cluster]
		if !ok {
			return nil, nil
		}
		if img == "!" {
			return nil, errors.New("rule cannot be applied")
		}
		c := []any{map[string]any{"name": "web", "image": img}}
		if err := unstructured.SetNestedSlice(m.Object, c, "spec", "template", "spec", "containers"); err != nil {
			return nil, err
		}
		return map[string]string{"policy.karmada.io/applied-overrides": `[{"policyName":"pin"}]`}, nil
	}
}

func claimed(t *testing.T, tplImage string, clusters []string, overrides map[string]string) Claimed {
	t.Helper()
	tpl := deployment(tplImage, nil)
	hash, err := Hash(tpl)
	if err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"}}
	cl := Claimed{Binding: rb, Template: tpl, Hash: hash, Clusters: map[string]Render{}}
	for _, c := range clusters {
		cl.Clusters[c] = RenderFor(tpl, hash, c, image(overrides))
	}
	return cl
}

// What a cluster gets is the template with its overrides: a change of
// either, where it lands, is a new revision; a new placement is not.
func TestChangedComparesWhatEachClusterGets(t *testing.T) {
	both := []string{"member1", "member2"}
	pinned := map[string]string{"member2": "nginx:1.24"}
	base := claimed(t, "nginx:1.25", both, pinned)
	kept := NewTemplate(base)
	legacy := kept
	legacy.Clusters = nil
	for _, tc := range []struct {
		name string
		kept *Template
		cur  Claimed
		want bool
	}{
		{"nothing changed", &kept, base, false},
		{"the template changed", &kept, claimed(t, "nginx:1.26", both, pinned), true},
		{"an override changed for one cluster", &kept, claimed(t, "nginx:1.25", both, map[string]string{"member2": "nginx:1.23"}), true},
		{"an override now applies where none did", &kept, claimed(t, "nginx:1.25", both, map[string]string{"member1": "nginx:1.24", "member2": "nginx:1.24"}), true},
		{"an override no longer applies", &kept, claimed(t, "nginx:1.25", both, nil), true},
		{"a cluster placed since, with an override", &kept, claimed(t, "nginx:1.25", []string{"member1", "member2", "member3"}, map[string]string{"member2": "nginx:1.24", "member3": "x"}), false},
		{"a cluster no longer placed", &kept, claimed(t, "nginx:1.25", []string{"member1"}, pinned), false},
		{"the template changed where every cluster overrides what changed", func() *Template {
			k := NewTemplate(claimed(t, "nginx:1.25", both, map[string]string{"member1": "a", "member2": "b"}))
			return &k
		}(), claimed(t, "nginx:1.26", both, map[string]string{"member1": "a", "member2": "b"}), false},
		{"an override that cannot be applied now is no change", &kept, claimed(t, "nginx:1.25", both, map[string]string{"member2": "!"}), false},
		{"a revision kept before per-cluster renders: the template decides", &legacy, claimed(t, "nginx:1.25", both, map[string]string{"member2": "nginx:1.23"}), false},
		{"a revision kept before per-cluster renders, template changed", &legacy, claimed(t, "nginx:1.26", both, pinned), true},
		{"the revision did not hold the template", nil, base, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Changed(tc.kept, tc.cur); got != tc.want {
				t.Errorf("Changed = %v, want %v", got, tc.want)
			}
		})
	}
}

// A revision keeps what each cluster got, so it can be sent again exactly.
func TestRenderedForIsWhatTheClusterGot(t *testing.T) {
	kept := NewTemplate(claimed(t, "nginx:1.25", []string{"member1", "member2", "member3"}, map[string]string{"member2": "nginx:1.24", "member3": "!"}))
	imageOf := func(o *unstructured.Unstructured) string {
		c, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		return c[0].(map[string]any)["image"].(string)
	}
	for _, tc := range []struct {
		cluster, image string
		rendered       bool
		applied        bool
	}{
		{"member1", "nginx:1.25", true, false},
		{"member2", "nginx:1.24", true, true},
		// Its overrides could not be applied: nothing kept for it; the
		// template is rendered with today's overrides.
		{"member3", "nginx:1.25", false, false},
		{"member4", "nginx:1.25", false, false},
	} {
		obj, hash, applied, rendered := kept.RenderedFor(tc.cluster)
		if imageOf(obj) != tc.image || rendered != tc.rendered || (len(applied) > 0) != tc.applied {
			t.Errorf("%s: image %s rendered %v applied %v, want %s %v %v", tc.cluster, imageOf(obj), rendered, applied, tc.image, tc.rendered, tc.applied)
		}
		if want, _ := Hash(obj); hash != want {
			t.Errorf("%s: hash %s, want the hash of what it got, %s", tc.cluster, hash, want)
		}
	}
	if kept.Clusters[0].Object != nil {
		t.Errorf("member1 got the template as it is; the revision keeps it once, not per cluster")
	}
}
