package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/federator-dev/federator/internal/clidoc"
)

// cliDocPath is where `make docs` writes the command reference, relative
// to the repository's root.
const cliDocPath = "docs/cli.md"

// newDocsCommand writes docs/cli.md from the command tree itself
// (internal/clidoc), so the reference cannot say something the help does
// not.
func newDocsCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "docs [--out FILE]",
		Short: "Write the command reference (docs/cli.md) from the commands' own help",
		Long: `Write one Markdown file with every federator command: its usage line, description,
examples and flags, in a stable order, with no dates and no paths of the machine it
ran on, so the same commands always give the same file. make docs runs it; a test
fails when docs/cli.md is not what the commands give.`,
		Example: `  federator docs                # writes docs/cli.md
  federator docs --out -        # prints it`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			doc := clidoc.Reference(newRootCommand("federator"), clidoc.MachinePaths())
			if out == "-" {
				_, err := cmd.OutOrStdout().Write(doc)
				return err
			}
			if dir := filepath.Dir(out); dir != "." {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
			}
			return os.WriteFile(out, doc, 0o644)
		},
	}
	cmd.Flags().StringVar(&out, "out", cliDocPath, "the `FILE` to write (-: standard output)")
	return cmd
}
