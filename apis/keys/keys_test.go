package keys

import (
	"flag"
	"strings"
	"testing"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/docgen"
)

var update = flag.Bool("update", false, "rewrite docs/architecture.md's table of keys from the table")

const architecture = "../../docs/architecture.md"

// TestDecisions: what each kind of key does to a member copy, a revision
// and a hold.
func TestDecisions(t *testing.T) {
	for _, tc := range []struct {
		key                          string
		toMembers, revision, decides bool
	}{
		{key: "app.example.com/owner", toMembers: true, revision: true},
		{key: "karmada.io/managed", toMembers: true, revision: true},
		{key: policykeys.SuspendedAnnotation, decides: true},
		{key: policykeys.ClusterSuspendedAnnotationPrefix + "member1", decides: true},
		{key: gatingv1alpha1.GatesAnnotation, decides: true},
		{key: policykeys.DeletionDelayAnnotation, toMembers: true, decides: true},
		{key: "kubectl.kubernetes.io/last-applied-configuration", toMembers: true},
		{key: rolloutsv1alpha1.RevisionAnnotation},
		{key: "rollouts.federator.dev/anything-else"},
		{key: workkeys.HoldReasonAnnotation},
		{key: workkeys.AppliedHashAnnotation, toMembers: true},
		{key: workkeys.DeletionTimestampAnnotation, toMembers: true},
		{key: gatingv1alpha1.OpenRequestAnnotation},
	} {
		if got := ToMembers(tc.key); got != tc.toMembers {
			t.Errorf("ToMembers(%s) = %v, want %v", tc.key, got, tc.toMembers)
		}
		if got := NewRevision(tc.key); got != tc.revision {
			t.Errorf("NewRevision(%s) = %v, want %v", tc.key, got, tc.revision)
		}
		if got := DecidesHolds(tc.key); got != tc.decides {
			t.Errorf("DecidesHolds(%s) = %v, want %v", tc.key, got, tc.decides)
		}
	}
	// The bare prefix names the empty cluster, unknown: it holds.
	if !DecidesHolds(policykeys.ClusterSuspendedAnnotationPrefix) {
		t.Errorf("DecidesHolds(%q) = false: the bare prefix names a cluster that is not registered, which holds every cluster",
			policykeys.ClusterSuspendedAnnotationPrefix)
	}
}

// TestTableIsWhole: every row says what it is on, who sets it and what it
// means, and names a key once.
func TestTableIsWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Table {
		if k.On == 0 || k.SetBy == "" || k.Meaning == "" {
			t.Errorf("row %s: On, SetBy and Meaning must be set", k.Name)
		}
		if k.Prefix != (k.Suffix != "") || k.Prefix != strings.HasSuffix(k.Name, "/") {
			t.Errorf("row %s: a family's row ends in / and has a Suffix; a key's has neither", k.Name)
		}
		if seen[k.Name] {
			t.Errorf("row %s twice", k.Name)
		}
		seen[k.Name] = true
	}
}

// TestArchitectureDocIsCurrent: docs/architecture.md shows the table as it
// is (`make docs` rewrites it).
func TestArchitectureDocIsCurrent(t *testing.T) {
	if err := docgen.Check(architecture, "keys table", Markdown(), *update); err != nil {
		t.Error(err)
	}
}
