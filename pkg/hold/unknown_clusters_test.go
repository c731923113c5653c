package hold

import (
	"slices"
	"testing"
)

func TestUnknownClusterNames(t *testing.T) {
	known := []string{"member1", "member2"}
	if got := UnknownClusters([]string{"member2", "membr1", "", "member1"}, known); !slices.Equal(got, []string{"membr1", ""}) {
		t.Errorf("UnknownClusters = %q, want the typo and the empty name, in order", got)
	}
	annotations := map[string]string{
		"suspended.propagation.federator.dev/member1": "ok",
		"suspended.propagation.federator.dev/membr2":  "typo",
		"suspended.propagation.federator.dev/":        "no name",
		"propagation.federator.dev/suspended":         "all",
	}
	want := []string{"suspended.propagation.federator.dev/", "suspended.propagation.federator.dev/membr2"}
	if got := UnknownClusterAnnotations(annotations, known); !slices.Equal(got, want) {
		t.Errorf("UnknownClusterAnnotations = %q, want %q", got, want)
	}
}
