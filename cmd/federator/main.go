// Command federator is a Karmada-compatible multi-cluster hub and local
// fleet simulator. Its subcommands only wire the packages under pkg/ and
// the rollout commands of cmd/federator/cli. Installed (or linked) as
// kubectl-federator it is a kubectl plugin: `kubectl federator get rollout`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/federator-dev/federator/cmd/federator/cli"
	"github.com/federator-dev/federator/config/install"
)

// pluginName is the name kubectl finds the binary by on PATH.
const pluginName = "kubectl-federator"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand(filepath.Base(os.Args[0]))
	err := root.ExecuteContext(ctx)
	if code := cli.ExitCode(err); code != 0 {
		// An exit code alone (diff: differences found) is no error to print.
		var exit *cli.ExitError
		if !errors.As(err, &exit) || exit.Err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", root.DisplayName(), err)
		}
		stop()
		os.Exit(code)
	}
}

// newRootCommand is federator's command tree; run as kubectl's plugin its
// help speaks of `kubectl federator`.
func newRootCommand(invokedAs string) *cobra.Command {
	root := &cobra.Command{
		Use:           "federator",
		Short:         "A Karmada-compatible hub that controls when a change reaches which cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if strings.TrimSuffix(invokedAs, ".exe") == pluginName {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl federator"}
	}
	root.AddCommand(newUpCommand(), newControllerCommand(), newAgentCommand(), newVersionCommand(), newDocsCommand())
	root.AddCommand(cli.Commands()...)
	root.AddCommand(cli.InstallCommands(defaultImage(version))...)
	return root
}

// defaultImage is the controller image `federator install` writes: the one
// `make image` builds from the same checkout, federator/federator:VERSION,
// or :latest (which `make image` also tags) from an unstamped build.
func defaultImage(version string) string {
	if version == "" || version == "dev" {
		return install.ImageRepository + ":latest"
	}
	return install.ImageRepository + ":" + version
}
