package clidoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A default picked up from the machine (home, temp or working directory)
// is written as the word for it, the most specific first; a default read
// from the environment is shown as documented; other help is kept, with
// placeholders such as <cluster> escaped outside code.
func TestCLIReferenceHasNoMachinePaths(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "a tool"}
	sub := &cobra.Command{Use: "run", Short: "run it", Long: "Sets a/<cluster>.\n\n\tcat <file>",
		Example: "  tool run --cache /home/alice/.cache/tool", Run: func(*cobra.Command, []string) {}}
	sub.Flags().String("cache", "/home/alice/.cache/tool", "cache `DIR`")
	sub.Flags().String("scratch", "/tmp/x/run", "scratch directory")
	sub.Flags().String("here", "/home/alice/src/tool/out", "output")
	sub.Flags().String("lease-namespace", "zz-from-this-pod", "namespace (from $POD_NAMESPACE, else system)")
	DocumentDefault(sub.Flags(), "lease-namespace", "system")
	sub.Flags().Bool("secret", false, "hidden")
	_ = sub.Flags().MarkHidden("secret")
	root.AddCommand(sub)

	doc := string(Reference(root, []Replacement{
		{"/home/alice/src/tool", "."}, {"/tmp/x", "$TMPDIR"}, {"/home/alice", "$HOME"},
	}))
	for _, want := range []string{
		`(default "$HOME/.cache/tool")`, `(default "$TMPDIR/run")`, `(default "./out")`, `(default "system")`,
		"tool run --cache $HOME/.cache/tool", "Sets a/\\<cluster>.", "\tcat <file>",
		"```\ntool run [flags]\n```",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("lacks %q:\n%s", want, doc)
		}
	}
	for _, bad := range []string{"/home/alice", "/tmp/x", "secret", "-h, --help", "zz-from-this-pod"} {
		if strings.Contains(doc, bad) {
			t.Errorf("contains %q:\n%s", bad, doc)
		}
	}
}

func TestMachinePathsMostSpecificFirst(t *testing.T) {
	home := t.TempDir()
	tmp := filepath.Join(home, "tmp")
	work := filepath.Join(tmp, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmp)
	t.Chdir(work)
	r := MachinePaths()
	want := []Replacement{{work, "."}, {tmp, "$TMPDIR"}, {home, "$HOME"}}
	if len(r) != len(want) {
		t.Fatalf("replacements %v, want %v", r, want)
	}
	for i := range want {
		if r[i] != want[i] {
			t.Errorf("replacements %v, want %v", r, want)
			break
		}
	}
}
