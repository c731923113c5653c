package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// connector connects to the hub the flags name; tests substitute a fake.
type connector func(connection) (*hub, error)

// Commands are the rollout commands federator's root command carries:
// suspend, resume, get, diff, gate, delete --now, rollout, freeze,
// unfreeze and dashboard.
func Commands() []*cobra.Command {
	return append(commands(connect), newDashboardCommand(restConfig))
}

// CommandsOnClock are the commands of Commands as run on a machine whose
// clock reads now(): for checkers that run the CLI on a skewed clock
// (test/chaos), where what the CLI writes must still be timed by the hub.
func CommandsOnClock(now func() time.Time) []*cobra.Command {
	return commands(func(c connection) (*hub, error) {
		h, err := connect(c)
		if h != nil {
			h.now = now
		}
		return h, err
	})
}

func commands(c connector) []*cobra.Command {
	return []*cobra.Command{newSuspendCommand(c), newResumeCommand(c), newGetCommand(c), newDiffCommand(c), newGateCommand(c), newDeleteCommand(c), newRolloutCommand(c),
		newFreezeCommand(c), newUnfreezeCommand(c)}
}

// exactArgs wants n arguments and, when they are not there, repeats the
// usage line so a person sees what goes where.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		got := fmt.Sprint(len(args))
		if len(args) > 0 {
			got += " (" + strings.Join(quoteAll(args), " ") + ")"
		}
		return fmt.Errorf("%s takes %d arguments, got %s: usage: %s", cmd.Name(), n, got, cmd.UseLine())
	}
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = fmt.Sprintf("%q", a)
	}
	return out
}
