package layout

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pureFiles are the pure parts of packages that also take API steps: each
// rule keeps one home beside what acts on it (docs/architecture.md, "Pure
// decisions"), and these files are held to the pure packages' rule.
var pureFiles = []string{
	"internal/revision/revision.go", // a template content's hash
	"internal/countdown/delay.go",   // what a deletion delay's value means
	"internal/countdown/end.go",     // when a countdown ends
}

func TestPureFilesImportNoClient(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pureFiles {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "..", path), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("%s: %v (a pure file moved or was renamed: update pureFiles and docs/architecture.md)", path, err)
		}
		for _, imp := range f.Imports {
			v, _ := strconv.Unquote(imp.Path.Value)
			local, ours := strings.CutPrefix(v, module)
			switch {
			case strings.HasPrefix(v, "sigs.k8s.io/controller-runtime") || strings.HasPrefix(v, "k8s.io/client-go"):
				t.Errorf("%s is a pure file but imports %s: take plain values, and leave API steps to the package's other files", path, v)
			case ours && !strings.HasPrefix(local, "apis/"):
				t.Errorf("%s is a pure file but imports %s", path, local)
			}
		}
		if name := "`" + filepath.Base(path) + "`"; !strings.Contains(string(doc), name) {
			t.Errorf("docs/architecture.md's \"Pure decisions\" does not name %s (%s)", name, path)
		}
	}
}
