// Command kindconst prints string constants of kind's node image build
// (sigs.k8s.io/kind/pkg/build/nodeimage): the default CNI and storage
// manifests and the images they name. They are unexported, so it
// type-checks the package's import-free const_*.go files and evaluates
// them, which keeps hack/kind-node-image.sh on exactly the manifests kind
// v0.30.0 writes into its own node images, without copying them here.
//
//	kindconst DIR NAME...   (DIR: the nodeimage package's directory)
//
// With one NAME it prints the value as is; with several, one per line.
package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: kindconst NODEIMAGE_DIR NAME...")
		os.Exit(2)
	}
	values, err := lookup(os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kindconst:", err)
		os.Exit(1)
	}
	for _, v := range values {
		if len(values) == 1 {
			fmt.Print(v)
		} else {
			fmt.Println(v)
		}
	}
}

// lookup evaluates the named string constants declared in dir/const_*.go.
func lookup(dir string, names []string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "const_*.go"))
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("no const_*.go in %s (%v)", dir, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	pkg, err := (&types.Config{}).Check("nodeimage", fset, files, nil)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", dir, err)
	}
	var out []string
	for _, name := range names {
		c, ok := pkg.Scope().Lookup(name).(*types.Const)
		if !ok || c.Val().Kind() != constant.String {
			return nil, fmt.Errorf("%s is not a string constant of %s", name, dir)
		}
		out = append(out, constant.StringVal(c.Val()))
	}
	return out, nil
}
