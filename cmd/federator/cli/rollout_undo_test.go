package cli

import (
	"context"
	"strings"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/revision"
)

func deploymentTemplate(image string, annotations map[string]string) *unstructured.Unstructured {
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "demo", "name": "web"},
		"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}}}},
	}}
	if annotations != nil {
		d.SetAnnotations(annotations)
	}
	return d
}

func keptRevision(t *testing.T, ro *rolloutsv1alpha1.Rollout, rev int64, tpl *unstructured.Unstructured) *appsv1.ControllerRevision {
	t.Helper()
	cr, err := revision.NewHistory(revision.Rollout{Obj: ro, Spec: &ro.Spec, Status: &ro.Status, Kind: "Rollout"}, rev,
		revision.Content{Templates: []revision.Template{{Binding: "demo/web-deployment", Hash: "h", Object: revision.Kept(tpl)}}})
	if err != nil {
		t.Fatal(err)
	}
	return cr
}

// liveTemplate is Deployment demo/web as the hub stores it.
func liveTemplate(t *testing.T, h *hub) *unstructured.Unstructured {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetAPIVersion("apps/v1")
	live.SetKind("Deployment")
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "demo", Name: "web"}, live); err != nil {
		t.Fatal(err)
	}
	return live
}

func image(t *testing.T, h *hub) (string, map[string]string) {
	t.Helper()
	live := liveTemplate(t, h)
	c, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	return c[0].(map[string]any)["image"].(string), live.GetAnnotations()
}

// gates is the annotation that gates a template: a hold, which undo keeps
// as the template has it (apis/keys).
const gates = "gating.federator.dev/gates"

func TestRolloutUndo(t *testing.T) {
	ro := testRollout(nil, progressingStatus()) // at revision 3
	setup := func() *hub {
		h := rolloutsHub(t, ro.DeepCopy())
		for _, o := range []client.Object{
			deploymentTemplate("nginx:1.27-broken", map[string]string{suspended: "incident 9", "team": "now", gates: "sre-approval"}),
			keptRevision(t, ro, 2, deploymentTemplate("nginx:1.26", map[string]string{"team": "then", suspended: "old hold", gates: "old-gate"})),
			keptRevision(t, ro, 1, deploymentTemplate("nginx:1.25", nil)),
		} {
			if err := h.client.Create(context.Background(), o); err != nil {
				t.Fatal(err)
			}
		}
		return h
	}

	h := setup()
	stdout, _, err := run(t, h, "rollout", "undo", "web", "-n", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Rollout demo/web: Deployment demo/web written back as revision 2 had them"; !strings.Contains(stdout, want) {
		t.Errorf("said %q, want %q", stdout, want)
	}
	img, annotations := image(t, h)
	if img != "nginx:1.26" {
		t.Errorf("image %s after undo, want the one before (nginx:1.26)", img)
	}
	if annotations["team"] != "then" || annotations[suspended] != "incident 9" || annotations[gates] != "sre-approval" {
		t.Errorf("annotations %v: want the kept revision's, with the holds (suspension, gates) the template has now", annotations)
	}

	h = setup()
	if _, _, err := run(t, h, "rollout", "undo", "web", "-n", "demo", "--to-revision", "1", "--dry-run"); err != nil {
		t.Fatal(err)
	}
	if img, _ := image(t, h); img != "nginx:1.27-broken" {
		t.Errorf("--dry-run wrote %s", img)
	}
	if _, _, err := run(t, h, "rollout", "undo", "web", "-n", "demo", "--to-revision", "1"); err != nil {
		t.Fatal(err)
	}
	if img, _ := image(t, h); img != "nginx:1.25" {
		t.Errorf("--to-revision 1 wrote %s", img)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--to-revision", "3"}, "Rollout demo/web is at revision 3: --to-revision must name an earlier one (1 to 2)"},
		{[]string{"--to-revision", "0"}, ""},
	} {
		h := rolloutsHub(t, ro.DeepCopy())
		_, _, err := run(t, h, append([]string{"rollout", "undo", "web", "-n", "demo"}, tc.args...)...)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "revision 2 is no longer kept") {
				t.Errorf("undo with no kept revision: %v, want it to say revision 2 is no longer kept", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestRolloutAbort(t *testing.T) {
	h := rolloutsHub(t, testRollout(nil, progressingStatus()))
	stdout, _, err := run(t, h, "rollout", "abort", "web", "-n", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "Rollout demo/web: revision 3 aborted") {
		t.Errorf("said %q", stdout)
	}
	ro := &rolloutsv1alpha1.Rollout{}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "demo", Name: "web"}, ro); err != nil {
		t.Fatal(err)
	}
	if got := ro.Annotations[rolloutsv1alpha1.AbortAnnotation]; got != "3" {
		t.Errorf("abort annotation %q, want the current revision 3", got)
	}
	stdout, _, err = run(t, h, "rollout", "abort", "web", "-n", "demo")
	if err != nil || !strings.Contains(stdout, "already aborted; nothing changed") {
		t.Errorf("aborting again: %q, %v", stdout, err)
	}
}

// A template changed a moment ago: until the controller takes it in, a
// Rollout that says Completed is about the content before, and status
// waits instead of answering "completed".
func TestRolloutStatusWaitsForANewContentToBeTakenIn(t *testing.T) {
	ro := testRollout(nil, completedStatus()) // revision 3, Completed
	h := rolloutsHub(t, ro.DeepCopy())
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-deployment",
		Annotations: map[string]string{policyv1alpha1.PropagationPolicyNameAnnotation: "web", policyv1alpha1.PropagationPolicyNamespaceAnnotation: "demo"}},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web"}}}
	ctx := context.Background()
	for _, o := range []client.Object{rb, deploymentTemplate("nginx:1.26", nil)} {
		if err := h.client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// Kept as the hub stores it, defaults and all, as the controller keeps it.
	setImage := func(image string) *unstructured.Unstructured {
		t.Helper()
		live := &unstructured.Unstructured{}
		live.SetAPIVersion("apps/v1")
		live.SetKind("Deployment")
		if err := h.client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, live); err != nil {
			t.Fatal(err)
		}
		if image != "" {
			c, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
			c[0].(map[string]any)["image"] = image
			_ = unstructured.SetNestedSlice(live.Object, c, "spec", "template", "spec", "containers")
			if err := h.client.Update(ctx, live); err != nil {
				t.Fatal(err)
			}
		}
		return live
	}
	kept := setImage("")
	hash, err := revision.Hash(kept)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := revision.NewHistory(revision.Rollout{Obj: ro, Spec: &ro.Spec, Status: &ro.Status, Kind: "Rollout"}, 3,
		revision.Content{Templates: []revision.Template{{Binding: "demo/web-deployment", Hash: hash, Object: revision.Kept(kept)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.client.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	setImage("nginx:1.27")
	stdout, _, err := run(t, h, "rollout", "status", "web", "-n", "demo", "--interval", "1ms", "--timeout", "50ms")
	if ExitCode(err) != exitNotFinished {
		t.Errorf("exit %d (%v), want %d: the status is about the content before the change", ExitCode(err), err, exitNotFinished)
	}
	if !strings.Contains(stdout, "waiting for the rollout controller to take in the templates' new content") {
		t.Errorf("said %q", stdout)
	}

	// Once the kept revision is the content, the status answers.
	setImage("nginx:1.26")
	if _, _, err := run(t, h, "rollout", "status", "web", "-n", "demo", "--timeout", "1s"); err != nil {
		t.Errorf("status of the content taken in: %v", err)
	}
}

// A revision whose templates are as they are now changed what clusters get
// through overrides: undo, which writes templates only, says so and what
// to do instead, and writes nothing.
func TestRolloutUndoOfAnOverrideChangeSaysWhatToDo(t *testing.T) {
	ro := testRollout(nil, progressingStatus()) // at revision 3
	h := rolloutsHub(t, ro.DeepCopy())
	live := deploymentTemplate("nginx:1.26", map[string]string{"team": "now"})
	if err := h.client.Create(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	before := liveTemplate(t, h)
	hash, err := revision.Hash(before)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := revision.NewHistory(revision.Rollout{Obj: ro, Spec: &ro.Spec, Status: &ro.Status, Kind: "Rollout"}, 2,
		revision.Content{Templates: []revision.Template{{Binding: "demo/web-deployment", Hash: hash, Object: revision.Kept(before)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.client.Create(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, h, "rollout", "undo", "web", "-n", "demo")
	want := "Rollout demo/web: Deployment demo/web already as revision 2 had them: what changed since is in the OverridePolicies or ClusterOverridePolicies"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "`federator rollout abort web`") {
		t.Fatalf("undo: %v, want an error saying %q and what to do", err, want)
	}
	after := liveTemplate(t, h)
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("the template was written (resourceVersion %s, was %s)", after.GetResourceVersion(), before.GetResourceVersion())
	}
}
