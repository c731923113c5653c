// Command federator is a Karmada-compatible multi-cluster hub and local
// fleet simulator. Its subcommands only wire the packages under pkg/.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := &cobra.Command{
		Use:           "federator",
		Short:         "A Karmada-compatible hub that controls when a change reaches which cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newUpCommand(), newControllerCommand())
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "federator:", err)
		os.Exit(1)
	}
}
