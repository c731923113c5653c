package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/federator-dev/federator/"

// pkgInfo is what the rules need of one package: its non-test imports and
// whether it registers a controller.
type pkgInfo struct {
	imports    []string
	controller bool
}

func scan(t *testing.T, root string) map[string]*pkgInfo {
	t.Helper()
	pkgs := map[string]*pkgInfo{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "hack" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		p := pkgs[filepath.ToSlash(rel)]
		if p == nil {
			p = &pkgInfo{}
			pkgs[filepath.ToSlash(rel)] = p
		}
		for _, imp := range f.Imports {
			v, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(p.imports, v) {
				p.imports = append(p.imports, v)
			}
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil &&
				(fn.Name.Name == "Setup" || strings.HasPrefix(fn.Name.Name, "Setup") && strings.HasSuffix(fn.Name.Name, "WithManager")) {
				p.controller = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// purePackages are the pure decision packages: they take plain values and
// import neither controller-runtime nor client-go.
var purePackages = []string{"pkg/hold", "pkg/placement", "pkg/gatestate", "pkg/analysis", "pkg/copystate"}

func TestImportsPointOneWay(t *testing.T) {
	pkgs := scan(t, "../..")
	controllers := map[string]bool{}
	for dir, p := range pkgs {
		if strings.HasPrefix(dir, "pkg/") && p.controller {
			controllers[dir] = true
		}
	}
	if len(controllers) < 4 {
		t.Fatalf("found only %d controller packages (%v): the scan is broken", len(controllers), controllers)
	}
	pure := purePackages
	for dir, p := range pkgs {
		for _, imp := range p.imports {
			local, ours := strings.CutPrefix(imp, module)
			switch {
			case ours && controllers[local] && local != dir && dir != "pkg/hub" && dir != "pkg/agent" && dir != "cmd/federator":
				t.Errorf("%s imports controller package %s: only pkg/hub, pkg/agent and cmd/federator (which wires them) may, not the CLI; "+
					"move what both need under internal/", dir, local)
			case slices.Contains(pure, dir) && (strings.HasPrefix(imp, "sigs.k8s.io/controller-runtime") || strings.HasPrefix(imp, "k8s.io/client-go")):
				t.Errorf("%s is a pure decision package but imports %s: take plain values instead", dir, imp)
			case slices.Contains(pure, dir) && ours && !strings.HasPrefix(local, "apis/") && !slices.Contains(pure, local):
				t.Errorf("%s is a pure decision package but imports %s", dir, local)
			case strings.HasPrefix(dir, "apis/") && ours && !strings.HasPrefix(local, "apis/"):
				t.Errorf("%s (API types and keys) imports %s: apis/ depends on nothing of federator", dir, local)
			case strings.HasPrefix(dir, "internal/") && !strings.HasSuffix(dir, "test") && ours && strings.HasPrefix(local, "pkg/"):
				t.Errorf("%s imports %s: internal helpers must not depend on pkg/", dir, local)
			}
		}
	}
}
