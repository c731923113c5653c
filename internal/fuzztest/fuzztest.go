// Package fuzztest holds what the fuzz targets of federator's parsers share:
// the check that a refusal is one a person can act on. It is imported by
// tests only.
package fuzztest

import (
	"strings"
	"testing"
)

// Explains fails t unless msg, the text of a refusal, is non-empty and
// names each of wants (the annotation, field or flag refused, the value,
// what is expected), so the person who wrote the input knows what to fix.
func Explains(t testing.TB, msg string, wants ...string) {
	t.Helper()
	if strings.TrimSpace(msg) == "" {
		t.Fatalf("refusal with no text; want it to name %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Fatalf("refusal %q does not name %q", msg, w)
		}
	}
}
