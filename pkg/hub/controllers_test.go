package hub

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/federator-dev/federator/internal/docgen"
)

func TestEnabled(t *testing.T) {
	all := ControllerNames()
	without := func(names ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(n string) bool { return slices.Contains(names, n) })
	}
	cases := []struct {
		name    string
		list    []string
		want    []string
		wantErr string
	}{
		{"the default runs every controller", []string{"*"}, all, ""},
		{"a disabled controller is left out of *", []string{"*", "-namespace"}, without("namespace"), ""},
		{"disabling wins over enabling, in any order", []string{"-execution", "*", "execution"}, without("execution"), ""},
		{"only the named ones without *", []string{"detector", "binding"}, []string{"binding", "detector"}, ""},
		{"nothing at all", []string{}, []string{}, ""},
		{"an unknown name is refused with the known ones", []string{"*", "-bindng"}, nil, `unknown controller "bindng"; known: *, detector, binding`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Enabled(tc.list)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for n := range got {
				names = append(names, n)
			}
			slices.Sort(names)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(names, want) {
				t.Errorf("Enabled(%q) = %v, want %v", tc.list, names, want)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite docs/architecture.md's table of controllers")

// TestArchitectureDocListsTheControllers: docs/architecture.md's table of
// controllers is Controllers' (`make docs` rewrites it), and each names a
// package that is there.
func TestArchitectureDocListsTheControllers(t *testing.T) {
	for _, c := range Controllers {
		if _, err := os.Stat(filepath.Join("../..", c.Package)); c.Package == "" || err != nil {
			t.Errorf("controller %s: Package %q is no directory of the repository", c.Name, c.Package)
		}
	}
	if err := docgen.Check("../../docs/architecture.md", "controllers table", ControllersMarkdown(), *update); err != nil {
		t.Error(err)
	}
}
