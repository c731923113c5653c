package main

import (
	"bytes"
	"runtime"
	"testing"
)

// `federator version` prints what the build stamped (-ldflags -X), and the
// Go version that built it.
func TestVersionPrintsWhatTheBuildStamped(t *testing.T) {
	for _, stamp := range []struct{ version, commit string }{{"dev", "unknown"}, {"v0.3.0-2-gabc1234-dirty", "abc1234def"}} {
		version, commit = stamp.version, stamp.commit
		var out bytes.Buffer
		root := newRootCommand("federator")
		root.SetOut(&out)
		root.SetArgs([]string{"version"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		want := "federator " + stamp.version + "\ncommit: " + stamp.commit + "\ngo: " + runtime.Version() + "\n"
		if out.String() != want {
			t.Errorf("stamped %+v: printed %q, want %q", stamp, out.String(), want)
		}
	}
	version, commit = "dev", "unknown"
}
