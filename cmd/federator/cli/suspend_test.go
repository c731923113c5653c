package cli

import (
	"strings"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	suspended  = "propagation.federator.dev/suspended"
	onMember2  = "suspended.propagation.federator.dev/member2"
	onMember3  = "suspended.propagation.federator.dev/member3"
	ppWeb      = "PropagationPolicy demo/web"
	deployWeb  = "Deployment demo/web"
	fleetNames = "member1, member2, member3"
)

func TestAnnotationChanges(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		clusters    []string
		suspend     bool
		reason      string
		patch       string // "" when nothing is written
		said        []string
	}{
		{"suspending sets the annotation to the reason", nil, nil, true, "incident 42",
			`{"metadata":{"annotations":{"propagation.federator.dev/suspended":"incident 42"}}}`,
			[]string{ppWeb + `: suspended on every cluster ("incident 42")`}},
		{"suspending without a reason sets true", nil, nil, true, "",
			`{"metadata":{"annotations":{"propagation.federator.dev/suspended":"true"}}}`,
			[]string{ppWeb + ": suspended on every cluster"}},
		{"suspending again with the same reason writes nothing and says so", map[string]string{suspended: "incident 42"}, nil, true, "incident 42",
			"", []string{ppWeb + `: already suspended on every cluster ("incident 42"); nothing changed`}},
		{"suspending again with another reason updates it and says so", map[string]string{suspended: "incident 41"}, nil, true, "incident 42",
			`{"metadata":{"annotations":{"propagation.federator.dev/suspended":"incident 42"}}}`,
			[]string{ppWeb + `: already suspended on every cluster; reason updated from "incident 41" to "incident 42"`}},
		{"a reason added to a suspension without one", map[string]string{suspended: "true"}, nil, true, "freeze",
			`{"metadata":{"annotations":{"propagation.federator.dev/suspended":"freeze"}}}`,
			[]string{`reason updated from none given to "freeze"`}},
		{"--clusters sets one annotation per cluster", map[string]string{onMember2: "old"}, []string{"member2", "member3"}, true, "canary",
			`{"metadata":{"annotations":{"suspended.propagation.federator.dev/member2":"canary","suspended.propagation.federator.dev/member3":"canary"}}}`,
			[]string{ppWeb + `: already suspended on cluster member2; reason updated from "old" to "canary"`,
				ppWeb + `: suspended on cluster member3 ("canary")`}},
		{"resuming removes the annotation", map[string]string{suspended: "incident 42", onMember3: "x"}, nil, false, "",
			`{"metadata":{"annotations":{"propagation.federator.dev/suspended":null}}}`,
			[]string{ppWeb + `: suspension on every cluster lifted: annotation propagation.federator.dev/suspended removed (reason was "incident 42")`}},
		{"resuming what is not suspended writes nothing and says so", map[string]string{onMember3: "x"}, nil, false, "",
			"", []string{ppWeb + ": not suspended on every cluster by annotation propagation.federator.dev/suspended; nothing to resume"}},
		{"resuming --clusters removes only theirs", map[string]string{suspended: "all", onMember3: "x"}, []string{"member3"}, false, "",
			`{"metadata":{"annotations":{"suspended.propagation.federator.dev/member3":null}}}`,
			[]string{ppWeb + `: suspension on cluster member3 lifted: annotation suspended.propagation.federator.dev/member3 removed (reason was "x")`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var changes []annotationChange
			if tc.suspend {
				changes = suspendChanges(tc.annotations, tc.clusters, tc.reason)
			} else {
				changes = resumeChanges(tc.annotations, tc.clusters)
			}
			if got := string(mergePatch(changes)); got != tc.patch {
				t.Errorf("patch %s, want %s", got, tc.patch)
			}
			var said []string
			for _, c := range changes {
				said = append(said, c.describe(ref{kind: "PropagationPolicy", namespace: "demo", name: "web"}))
			}
			for _, want := range tc.said {
				if !strings.Contains(strings.Join(said, "\n"), want) {
					t.Errorf("said %q, want %q", said, want)
				}
			}
		})
	}
}

// fleetHub is three registered members, PropagationPolicy demo/web with
// policy's annotations and suspension, and Deployment demo/web it claims
// for every member.
func fleetHub(t *testing.T, policyAnnotations, templateAnnotations map[string]string, suspension *policyv1alpha1.Suspension) *hub {
	t.Helper()
	return newTestHub(t, cluster("member1"), cluster("member2"), cluster("member3"),
		propagationPolicy("web", policyAnnotations, suspension), deployment("web", "nginx:1.27", 2, templateAnnotations),
		resourceBinding("web", "web", "member1", "member2", "member3"))
}

func annotationsOf(t *testing.T, h *hub, obj client.Object) map[string]string {
	t.Helper()
	if err := h.client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return obj.GetAnnotations()
}

func TestSuspendCommand(t *testing.T) {
	h := fleetHub(t, nil, nil, nil)
	pp := &policyv1alpha1.PropagationPolicy{}
	pp.Namespace, pp.Name = "demo", "web"
	before := annotationsOf(t, h, pp)
	generation := pp.Generation

	stdout, _, err := run(t, h, "suspend", "pp", "web", "-n", "demo", "-m", "incident 42")
	if err != nil {
		t.Fatal(err)
	}
	if want := ppWeb + ": suspended on every cluster (\"incident 42\")\n"; stdout != want {
		t.Errorf("said %q, want %q", stdout, want)
	}
	if got := annotationsOf(t, h, pp)[suspended]; got != "incident 42" || len(before) != 0 {
		t.Errorf("annotation %q, want the reason", got)
	}
	if pp.Generation != generation {
		t.Errorf("generation %d, want %d: only metadata changes", pp.Generation, generation)
	}

	stdout, _, err = run(t, h, "suspend", "deployment", "web", "-n", "demo", "--clusters", "member3", "-m", "canary looks bad")
	if err != nil {
		t.Fatal(err)
	}
	dep := &appsv1.Deployment{}
	dep.Namespace, dep.Name = "demo", "web"
	if got := annotationsOf(t, h, dep); got[onMember3] != "canary looks bad" || got[suspended] != "" {
		t.Errorf("template annotations %v, want only member3's", got)
	}
	if !strings.Contains(stdout, deployWeb+`: suspended on cluster member3 ("canary looks bad")`) {
		t.Errorf("said %q", stdout)
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	cases := []struct {
		name string
		args []string
		err  string
	}{
		{"an unknown cluster", []string{"suspend", "pp", "web", "-n", "demo", "--clusters", "member1,member9"},
			`cluster "member9" is not registered on the hub (registered: ` + fleetNames + `); nothing changed`},
		{"an empty cluster name", []string{"suspend", "pp", "web", "-n", "demo", "--clusters", "member1,"},
			"--clusters holds an empty name"},
		{"an unknown kind", []string{"suspend", "pipeline", "web", "-n", "demo"},
			`unknown kind "pipeline": the hub serves no such resource; use pp, cpp or a kind`},
		{"an object that is not there", []string{"suspend", "pp", "api", "-n", "demo"},
			"PropagationPolicy demo/api not found on the hub at https://hub.test:6443: check the name, and the namespace (-n)"},
		{"a missing name", []string{"suspend", "pp"},
			`suspend takes 2 arguments, got 1 ("pp"): usage: federator suspend pp|cpp|KIND NAME`},
		{"resume with a reason", []string{"resume", "pp", "web", "-n", "demo", "-m", "why"},
			"unknown shorthand flag: 'm'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := fleetHub(t, map[string]string{suspended: "keep"}, nil, nil)
			pp := &policyv1alpha1.PropagationPolicy{}
			pp.Namespace, pp.Name = "demo", "web"
			_ = annotationsOf(t, h, pp)
			rv := pp.ResourceVersion
			_, _, err := run(t, h, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
			if _ = annotationsOf(t, h, pp); pp.ResourceVersion != rv {
				t.Errorf("the policy was written (resourceVersion %s → %s)", rv, pp.ResourceVersion)
			}
		})
	}
}

func TestResumeSaysWhatStillHolds(t *testing.T) {
	cases := []struct {
		name                          string
		policyAnnotations, templateAn map[string]string
		suspension                    *policyv1alpha1.Suspension
		args                          []string
		said                          []string
	}{
		{"the policy's spec.suspension still holds once the annotation is gone",
			map[string]string{suspended: "incident 42"}, nil, &policyv1alpha1.Suspension{Dispatching: ptr.To(true)},
			[]string{"resume", "pp", "web", "-n", "demo"},
			[]string{ppWeb + `: suspension on every cluster lifted: annotation propagation.federator.dev/suspended removed (reason was "incident 42")`,
				ppWeb + ": still held on every cluster (" + fleetNames + "): suspended by spec.suspension.dispatching of " + ppWeb + "; set it to false to resume"}},
		{"a template's own annotation still holds its cluster when the policy resumes",
			map[string]string{suspended: "incident 42"}, map[string]string{onMember2: "canary"}, nil,
			[]string{"resume", "pp", "web", "-n", "demo"},
			[]string{ppWeb + ": still held on member2: suspended by annotation " + onMember2 + " on " + deployWeb + ` ("canary"); remove the annotation to resume`}},
		{"the policy's annotation still holds a template that resumes",
			map[string]string{suspended: "incident 42"}, map[string]string{onMember2: "canary"}, nil,
			[]string{"resume", "deployment", "web", "-n", "demo", "--clusters", "member2"},
			[]string{deployWeb + `: suspension on cluster member2 lifted`,
				deployWeb + ": still held on member2: suspended by annotation " + suspended + " on " + ppWeb + ` ("incident 42"); remove the annotation to resume`}},
		{"dispatchingOnClusters holds only the clusters it lists",
			nil, map[string]string{suspended: "true"}, &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member3"}}},
			[]string{"resume", "deploy", "web", "-n", "demo"},
			[]string{deployWeb + ": still held on member3: suspended by spec.suspension.dispatchingOnClusters.clusterNames of " + ppWeb + "; remove member3 from it to resume"}},
		{"a per-cluster annotation naming no registered Cluster (a typo) still holds, and says so",
			nil, map[string]string{onMember2: "canary", "suspended.propagation.federator.dev/membr2": "canary"}, nil,
			[]string{"resume", "deployment", "web", "-n", "demo", "--clusters", "member2"},
			[]string{deployWeb + ": still held on member2: annotation suspended.propagation.federator.dev/membr2 on " + deployWeb +
				" names \"membr2\", which is no registered Cluster"}},
		{"nothing else holds: it says dispatching resumes",
			map[string]string{suspended: "incident 42"}, nil, nil,
			[]string{"resume", "pp", "web", "-n", "demo"},
			[]string{ppWeb + ": nothing else holds " + fleetNames + "; dispatching resumes"}},
		{"resuming what is not suspended says so and names what does hold",
			nil, nil, &policyv1alpha1.Suspension{Dispatching: ptr.To(true)},
			[]string{"resume", "pp", "web", "-n", "demo"},
			[]string{ppWeb + ": not suspended on every cluster by annotation " + suspended + "; nothing to resume",
				ppWeb + ": still held on every cluster"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := fleetHub(t, tc.policyAnnotations, tc.templateAn, tc.suspension)
			// The detector copies the policy's suspension into the binding.
			if tc.suspension != nil {
				rb := resourceBinding("web", "web")
				if err := h.client.Get(t.Context(), client.ObjectKeyFromObject(rb), rb); err != nil {
					t.Fatal(err)
				}
				rb.Spec.Suspension = &workv1alpha2.Suspension{Suspension: *tc.suspension}
				if err := h.client.Update(t.Context(), rb); err != nil {
					t.Fatal(err)
				}
			}
			stdout, _, err := run(t, h, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.said {
				if !strings.Contains(stdout, want) {
					t.Errorf("said:\n%s\nwant a line with:\n%s", stdout, want)
				}
			}
			if strings.Contains(stdout, "still held") == strings.Contains(stdout, "nothing else holds") {
				t.Errorf("said:\n%s\nwant either what still holds or that nothing does", stdout)
			}
		})
	}
}

// A per-cluster annotation naming a cluster that is not registered holds
// every cluster (pkg/hold): resume must be able to remove it after the
// cluster left, while suspend still refuses the name.
func TestResumeRemovesTheAnnotationOfAClusterThatLeft(t *testing.T) {
	const onGone = "suspended.propagation.federator.dev/member9"
	h := fleetHub(t, nil, map[string]string{onGone: "canary"}, nil)
	dep := &appsv1.Deployment{}
	dep.Namespace, dep.Name = "demo", "web"

	if _, _, err := run(t, h, "resume", "deployment", "web", "-n", "demo", "--clusters", "member8"); err == nil ||
		!strings.Contains(err.Error(), `cluster "member8" is not registered on the hub`) {
		t.Errorf("resume of an unregistered cluster the object has no annotation for: error %v", err)
	}
	stdout, _, err := run(t, h, "resume", "deployment", "web", "-n", "demo", "--clusters", "member9")
	if err != nil {
		t.Fatal(err)
	}
	if want := deployWeb + ": suspension on cluster member9 lifted: annotation " + onGone + ` removed (reason was "canary")`; !strings.Contains(stdout, want) {
		t.Errorf("said %q, want %q", stdout, want)
	}
	if got := annotationsOf(t, h, dep); len(got) != 0 {
		t.Errorf("annotations left: %v", got)
	}
}
