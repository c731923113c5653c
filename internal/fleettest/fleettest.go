// Package fleettest owns starting real API servers for package tests: a
// fleet of envtest API servers from the repository's bin/ (or
// $KUBEBUILDER_ASSETS), stopped when the test ends. Missing binaries fail
// the test rather than skip it.
package fleettest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/federator-dev/federator/pkg/fleet"
)

// Start starts a fleet for t. Empty o.Dir and o.BinDir default to a
// directory of t's own and the binaries the project builds.
func Start(t testing.TB, o fleet.Options) *fleet.Fleet {
	t.Helper()
	if o.BinDir == "" {
		o.BinDir = binDir()
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f, err := fleet.Start(ctx, o)
	if err != nil {
		t.Fatalf("start a fleet from %s (run `make binaries` first): %v", o.BinDir, err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Errorf("stop the fleet: %v", err)
		}
	})
	return f
}

// binDir is $KUBEBUILDER_ASSETS, or the repository's bin/.
func binDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "bin")
}
