package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// Set at build time by the Makefile (-ldflags -X main.version=... -X
// main.commit=...); a plain `go build` leaves them at dev and unknown.
var (
	version = "dev"
	commit  = "unknown"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print federator's version, the commit it was built from and the Go version that built it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "federator %s\ncommit: %s\ngo: %s\n", version, commit, runtime.Version())
			return err
		},
	}
}
