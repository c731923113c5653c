package main

import "testing"

// Installed as kubectl-federator, help and errors speak of the command a
// person typed: `kubectl federator ...`.
func TestRootCommandNamesHowItWasInvoked(t *testing.T) {
	for invokedAs, want := range map[string]string{
		"federator": "federator", "kubectl-federator": "kubectl federator", "kubectl-federator.exe": "kubectl federator",
	} {
		root := newRootCommand(invokedAs)
		if got := root.DisplayName(); got != want {
			t.Errorf("invoked as %s: named %q, want %q", invokedAs, got, want)
		}
		for _, sub := range []string{"up", "controller", "suspend", "resume", "get", "diff"} {
			if c, _, err := root.Find([]string{sub}); err != nil || c.Name() != sub {
				t.Errorf("invoked as %s: no %s command", invokedAs, sub)
			}
		}
	}
}

// install writes the image `make image` builds from the same checkout:
// federator/federator:VERSION, or :latest from an unstamped build.
func TestDefaultImageIsThisBuilds(t *testing.T) {
	for version, want := range map[string]string{"v0.3.0-4-gabc": "federator/federator:v0.3.0-4-gabc", "dev": "federator/federator:latest", "": "federator/federator:latest"} {
		if got := defaultImage(version); got != want {
			t.Errorf("defaultImage(%q) = %q, want %q", version, got, want)
		}
	}
}
