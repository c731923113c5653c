package layout

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ownerLine is one line of docs/architecture.md's "Who owns what": the
// package's directory in backquotes, a dash, what it owns.
var ownerLine = regexp.MustCompile("^- `([a-z0-9/]+)` — \\S")

// TestArchitectureNamesEveryPackage: docs/architecture.md's "Who owns
// what" has one line for every package of the program (not test/ or
// hack/), and no line for a package that is not there, so the page cannot
// go stale when a package is added, moved or removed; its "Pure decisions"
// are the packages the import rules hold to plain values.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Who owns what\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Who owns what" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")

	listed := map[string]int{}
	var pure []string
	inPure := false
	for _, line := range strings.Split(section, "\n") {
		if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, "- ") {
			inPure = strings.HasPrefix(line, "Pure decisions")
		}
		m := ownerLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		listed[m[1]]++
		if inPure {
			pure = append(pure, m[1])
		}
	}

	packages := map[string]bool{}
	for dir := range scan(t, "../..") {
		if dir == "." || strings.HasPrefix(dir, "test/") || strings.HasPrefix(dir, "hack/") {
			continue
		}
		packages[dir] = true
	}
	if len(packages) < 30 {
		t.Fatalf("found only %d packages: the scan is broken", len(packages))
	}
	for _, dir := range slices.Sorted(maps.Keys(packages)) {
		switch n := listed[dir]; {
		case n == 0:
			t.Errorf("docs/architecture.md's \"Who owns what\" has no line for %s: add \"- `%s` — what it owns\" (its doc comment, shortened)", dir, dir)
		case n > 1:
			t.Errorf("docs/architecture.md's \"Who owns what\" lists %s %d times: one line each", dir, n)
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(listed)) {
		if !packages[dir] {
			if _, err := os.Stat(filepath.Join("../..", dir)); err != nil {
				t.Errorf("docs/architecture.md's \"Who owns what\" lists %s, which does not exist", dir)
			} else {
				t.Errorf("docs/architecture.md's \"Who owns what\" lists %s, which holds no Go package of the program", dir)
			}
		}
	}
	slices.Sort(pure)
	want := slices.Clone(purePackages)
	slices.Sort(want)
	if !slices.Equal(pure, want) {
		t.Errorf("docs/architecture.md's \"Pure decisions\" lists %v; the import rules hold %v to plain values", pure, want)
	}
}
