package moduleversions

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

func requirements(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	return out
}

func TestKarmadaSuiteSharesFederatorsModuleVersions(t *testing.T) {
	root := filepath.Join("..", "..")
	federator := requirements(t, filepath.Join(root, "go.mod"))
	suite := requirements(t, filepath.Join(root, "hack", "karmada-e2e", "go.mod"))
	if len(suite) < 10 {
		t.Fatalf("hack/karmada-e2e/go.mod requires %d modules; it should state the versions it shares with federator (about 40)", len(suite))
	}
	var drift []string
	for path, want := range federator {
		if have, ok := suite[path]; ok && have != want {
			drift = append(drift, path+"@"+want)
		}
	}
	sort.Strings(drift)
	if len(drift) > 0 {
		t.Errorf("hack/karmada-e2e/go.mod requires other versions than go.mod of %d modules, so building Karmada's suite compiles them again; align them: (cd hack/karmada-e2e && go get %s)",
			len(drift), strings.Join(drift, " "))
	}
}
