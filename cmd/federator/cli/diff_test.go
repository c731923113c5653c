package cli

import (
	"strings"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func object(t *testing.T, yamlish map[string]any) *unstructured.Unstructured {
	t.Helper()
	return &unstructured.Unstructured{Object: yamlish}
}

func webObject(image string, annotations map[string]any, extra map[string]any) map[string]any {
	metadata := map[string]any{"name": "web", "namespace": "demo", "labels": map[string]any{"app": "web", "karmada.io/managed": "true"}}
	if annotations != nil {
		metadata["annotations"] = annotations
	}
	o := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
		"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": image}}}}}}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

func TestUnifiedDiffShowsOnlyWhatTheHubManages(t *testing.T) {
	desired := object(t, webObject("nginx:1.27", nil, nil))
	// What the member stores beside the hub's fields: status, managed
	// fields, the server's bookkeeping and federator's applied-hash.
	live := object(t, webObject("nginx:1.25", map[string]any{"work.federator.dev/applied-hash": "aaaa", "deployment.kubernetes.io/revision": "1"},
		map[string]any{"status": map[string]any{"readyReplicas": int64(2)}}))
	metadata := live.Object["metadata"].(map[string]any)
	metadata["resourceVersion"], metadata["uid"], metadata["generation"] = "41", "u-1", int64(3)
	metadata["managedFields"] = []any{map[string]any{"manager": "federator"}}
	after := object(t, webObject("nginx:1.27", map[string]any{"work.federator.dev/applied-hash": "bbbb", "deployment.kubernetes.io/revision": "1"},
		map[string]any{"status": map[string]any{"readyReplicas": int64(1)}}))
	after.Object["metadata"].(map[string]any)["resourceVersion"] = "41"
	after.Object["metadata"].(map[string]any)["generation"] = int64(4)

	got, err := unifiedDiff("member3", desired, live, after)
	if err != nil {
		t.Fatal(err)
	}
	want := `--- member3 apps/v1 Deployment demo/web (live)
+++ member3 apps/v1 Deployment demo/web (after resume)
@@ -13,5 +13,5 @@
   template:
     spec:
       containers:
-      - image: nginx:1.25
+      - image: nginx:1.27
         name: app
`
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	for _, never := range []string{"status", "managedFields", "resourceVersion", "applied-hash", "generation", "uid"} {
		if strings.Contains(got, never) {
			t.Errorf("diff shows %s", never)
		}
	}

	if same, _ := unifiedDiff("member3", desired, after, after.DeepCopy()); same != "" {
		t.Errorf("equal objects differ:\n%s", same)
	}
	created, _ := unifiedDiff("member3", desired, nil, after)
	if !strings.Contains(created, "@@ -0,0 +1,17 @@") || !strings.Contains(created, "+      - image: nginx:1.27") {
		t.Errorf("an absent member object shows every line added, got:\n%s", created)
	}
}

// A template's suspension annotations leave it on resume: they are no
// change the resume brings to a member.
func TestResumedManifestDropsSuspensionAnnotations(t *testing.T) {
	m := object(t, webObject("nginx:1.27", map[string]any{
		"propagation.federator.dev/suspended":         "incident 42",
		"suspended.propagation.federator.dev/member3": "canary",
		"team": "payments",
	}, nil))
	raw, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	w := &workv1alpha1.Work{}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{}}
	w.Spec.Workload.Manifests[0].Raw = raw
	got := resumedManifest(w).GetAnnotations()
	if len(got) != 1 || got["team"] != "payments" {
		t.Errorf("annotations %v, want only team", got)
	}
}

func TestDiffWithoutHeldClustersComparesNothing(t *testing.T) {
	h := fleetHub(t, nil, nil, nil)
	web, rb := template(t, h, "web"), resourceBinding("web", "web", "member1", "member2", "member3")
	if err := h.client.Get(t.Context(), client.ObjectKeyFromObject(rb), rb); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"member1", "member2", "member3"} {
		if err := h.client.Create(t.Context(), workFor(t, rb, web, m)); err != nil {
			t.Fatal(err)
		}
	}
	h.member = nil // reaching a member would panic: nothing is held, nothing is compared
	stdout, stderr, err := run(t, h, "diff", "deployment", "web", "-n", "demo")
	if err != nil || stdout != "" {
		t.Errorf("exit %d (%v), printed %q", ExitCode(err), err, stdout)
	}
	if want := deployWeb + ": no cluster is held, so resuming changes nothing"; !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

func TestDiffErrorsExitTwo(t *testing.T) {
	h := fleetHub(t, nil, nil, nil)
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings"}}
	for _, obj := range []client.Object{settings, cluster("member4")} {
		if err := h.client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		args []string
		err  string
	}{
		{"a template no policy propagates", []string{"diff", "configmap", "settings", "-n", "demo"},
			"ConfigMap demo/settings is not propagated (no binding for it on the hub)"},
		{"a template that does not exist", []string{"diff", "deployment", "api", "-n", "demo"}, "Deployment demo/api not found"},
		{"an unknown kind", []string{"diff", "pipeline", "web"}, `unknown kind "pipeline"`},
		{"an unknown cluster", []string{"diff", "deployment", "web", "-n", "demo", "--clusters", "member9"}, `cluster "member9" is not registered`},
		{"a cluster the template does not go to", []string{"diff", "deployment", "web", "-n", "demo", "--clusters", "member4"},
			"Deployment demo/web: cluster member4 is not one of its targets (member1, member2, member3)"},
		{"a missing name", []string{"diff", "deployment"}, "diff takes 2 arguments, got 1"},
		{"an unknown flag", []string{"diff", "deployment", "web", "--color"}, "unknown flag: --color"},
		{"a named cluster without a Work", []string{"diff", "deployment", "web", "-n", "demo", "--clusters", "member1"},
			"Deployment demo/web on member1: Work karmada-es-member1/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, h, tc.args...)
			if ExitCode(err) != 2 || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("exit %d, error %v; want exit 2 and %q", ExitCode(err), err, tc.err)
			}
		})
	}
}
