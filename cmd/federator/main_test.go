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
