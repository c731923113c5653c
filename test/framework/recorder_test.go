package framework

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

func deploymentAt(resourceVersion, image string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "app", "image": image}}}}}}}
	u.SetResourceVersion(resourceVersion)
	return u
}

func TestJSONPathReadsWhatIsThereAndNothingElse(t *testing.T) {
	for _, c := range []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"an image", deploymentAt("1", "nginx:1.25"), "nginx:1.25"},
		{"no containers", &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}, ""},
		{"an empty container list", &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{
			"spec": map[string]any{"containers": []any{}}}}}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Image(c.obj); got != c.want {
				t.Errorf("Image = %q, want %q", got, c.want)
			}
		})
	}
}

func TestRecorderHistoryAndSync(t *testing.T) {
	r := &Recorder{versions: []Version{
		{Event: Existing, Object: deploymentAt("10", "nginx:1.25")},
		{Event: watch.Modified, Object: deploymentAt("11", "nginx:bad")},
		{Event: watch.Modified, Object: deploymentAt("12", "nginx:1.25")},
		{Event: watch.Deleted, Object: deploymentAt("13", "nginx:1.25")},
	}}
	if got, want := r.Values(Image), []string{"nginx:1.25", "nginx:bad", "nginx:1.25", "nginx:1.25"}; !slices.Equal(got, want) {
		t.Errorf("Values = %q, want %q", got, want)
	}
	if got, want := r.History(1, 3, Image), []string{"MODIFIED nginx:bad", "MODIFIED nginx:1.25"}; !slices.Equal(got, want) {
		t.Errorf("History(1, 3) = %q, want %q", got, want)
	}
	if got := r.ValuesBetween(2, 99, Image); len(got) != 2 {
		t.Errorf("ValuesBetween(2, past the end) = %q, want the last two", got)
	}
	if got := r.Writes(); got != 3 {
		t.Errorf("Writes = %d, want 3 (the version found at the start is no write)", got)
	}
	for _, c := range []struct {
		name    string
		current *unstructured.Unstructured
		want    bool
	}{
		{"absent after the recorded deletion", nil, true},
		{"a version recorded before", deploymentAt("12", "nginx:1.25"), true},
		{"a version not delivered yet", deploymentAt("14", "nginx:1.26"), false},
	} {
		if got := r.holds(c.current); got != c.want {
			t.Errorf("%s: holds = %v, want %v", c.name, got, c.want)
		}
	}
	if (&Recorder{versions: r.versions[:2]}).holds(nil) {
		t.Error("absent while the last version recorded is not a deletion: the deletion is still on its way")
	}
}

func TestContentWritesLeaveStatusWritesOut(t *testing.T) {
	withStatus := func(resourceVersion, image string, ready int64, revision string) *unstructured.Unstructured {
		u := deploymentAt(resourceVersion, image)
		u.Object["status"] = map[string]any{"readyReplicas": ready}
		u.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": revision})
		return u
	}
	labelled := withStatus("15", "nginx:1.25", 2, "2")
	labelled.SetLabels(map[string]string{"team": "web"})
	r := &Recorder{versions: []Version{
		{Event: Existing, Object: withStatus("10", "nginx:1.25", 0, "1")},
		{Event: watch.Modified, Object: withStatus("11", "nginx:1.25", 1, "1")}, // status
		{Event: watch.Modified, Object: withStatus("12", "nginx:1.25", 2, "2")}, // status and revision
		{Event: watch.Modified, Object: withStatus("13", "nginx:1.26", 2, "2")}, // the spec
		{Event: watch.Modified, Object: withStatus("14", "nginx:1.25", 2, "2")}, // the spec back
		{Event: watch.Modified, Object: labelled},                               // a label
		{Event: watch.Deleted, Object: labelled},                                // a deletion
	}}
	if got := r.ContentWrites(); got != 4 {
		t.Errorf("ContentWrites = %d, want 4 (two image changes, a label, a deletion; not the two status writes)", got)
	}
	if got := r.Writes(); got != 6 {
		t.Errorf("Writes = %d, want 6", got)
	}
}
