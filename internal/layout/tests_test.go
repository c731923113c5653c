package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testFunc finds the functions `go test` runs: tests, fuzz targets (their
// seeds) and examples.
var testFunc = regexp.MustCompile(`(?m)^func (Test|Fuzz|Example)\w*\(`)

// TestEveryTestRunsSomewhere: a package whose tests no `go test` line of
// the Makefile names is a package whose tests run nowhere (test/chaos's
// did, while `make unit` left it out). Benchmark-only lines (-run '^$$')
// run no tests and do not count.
func TestEveryTestRunsSomewhere(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(makefile), "\n") {
		fields := strings.Fields(line)
		i := slices.Index(fields, "go")
		if i < 0 || i+1 >= len(fields) || fields[i+1] != "test" || strings.Contains(line, "-run '^$$'") {
			continue
		}
		for _, f := range fields[i+2:] {
			if strings.HasPrefix(f, "./") {
				patterns = append(patterns, strings.TrimSuffix(strings.TrimPrefix(f, "./"), "/"))
			}
		}
	}
	if !slices.Contains(patterns, "pkg/...") {
		t.Fatalf("the Makefile's go test lines name %v, not ./pkg/...: the scan is broken", patterns)
	}
	covered := func(dir string) bool {
		for _, p := range patterns {
			if tree, ok := strings.CutSuffix(p, "/..."); ok && (dir == tree || strings.HasPrefix(dir, tree+"/")) || dir == p {
				return true
			}
		}
		return false
	}

	root := "../.."
	tested := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path == root {
				return nil
			}
			if strings.HasPrefix(name, ".") || name == "bin" || name == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own, which `go test ./...` does not enter
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if testFunc.Match(src) {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			tested[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !tested["internal/layout"] {
		t.Fatalf("found tests in %d packages, not in internal/layout: the scan is broken", len(tested))
	}
	for dir := range tested {
		if !covered(dir) {
			t.Errorf("%s has tests that no `go test` line of the Makefile runs (it names %v): add ./%s/ to `make unit`", dir, patterns, dir)
		}
	}
}
