package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newGetCommand(connect connector) *cobra.Command {
	var (
		conn     connection
		output   string
		watch    bool
		interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "get policies|bindings|works|clusters|gates|rollout|rollouts|clusterrollouts [NAME] [-o wide|yaml|json] [--watch]",
		Short: "List policies, bindings, Works, clusters, or the rollout: each template's state in each cluster",
		Long: `List what the hub holds, kubectl-style: policies (pp, cpp), bindings (rb, crb),
works, clusters, gates (state, default, until when, schedules, and which
policies and clusters wait for each), rollout, or the staged rollouts:
rollouts and clusterrollouts (revision, current stage, healthy/total clusters;
` + "`federator rollout status`" + ` shows one in full).

"get rollout" states, per template and target cluster: Applied (with the
template generation and the images the member runs), Held (what holds it and
what releases it, with the reason a person gave), Failed (the member's error),
Pending (not applied yet) or Deleting. A copy that is Held, Pending or Failed
shows under IMAGES what the member still runs (when the hub recorded it), and
its MESSAGE starts with what it waits for ("wants nginx:1.27; suspended
by ..."); -o json has them as runningImages and wantedImages. For workloads, READY: ready/desired
replicas collected from the member, counting only the pods of the version the
member rolls out (as "kubectl rollout status" does), so a rollout stuck on a
version that never becomes ready shows 0/2 while the old pods still serve. NAME selects one template: "web" or "deployment/web".
-o json prints a RolloutList (apiVersion ` + RolloutListVersion + `) for scripts.`,
		Example: `  federator get rollout -n demo
  federator get rollout web -n demo -o wide --watch
  federator get pp -A
  kubectl federator get rollout -n demo -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || len(args) > 2 {
				return fmt.Errorf("get takes what to list and an optional NAME: usage: %s (what: %s)", cmd.UseLine(), getTypeNames())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			what, err := resolveGetType(args[0])
			if err != nil {
				return err
			}
			if err := validOutput(output); err != nil {
				return err
			}
			h, err := connect(conn)
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 2 {
				name = args[1]
			}
			render := func(ctx context.Context) (shown, state []byte, err error) {
				l, err := what.list(ctx, h, name)
				if err != nil {
					return nil, nil, err
				}
				return renderListing(l, output, h, name == "")
			}
			if watch {
				return watchLoop(cmd.Context(), interval, render, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			shown, _, err := render(cmd.Context())
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(shown)
			if len(shown) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), noneFound(what, h))
			}
			return err
		},
	}
	conn.addFlags(cmd.Flags(), true)
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: wide, yaml or json (default: a table)")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "keep listing: print again whenever something shown changes (Ctrl-C stops)")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "with --watch, how often the hub is read")
	return cmd
}

// listing is what one `get` reads: its table and the objects -o json or
// yaml print.
type listing interface {
	table(wide bool, h *hub) *table
	// object is what -o json|yaml prints; single, when a NAME was given.
	object(single bool) any
	len() int
}

// getType is one thing `get` lists.
type getType struct {
	// names are what a person may type, the first the one shown in help.
	names []string
	list  func(ctx context.Context, h *hub, name string) (listing, error)
	// clusterScoped: "none found" names no namespace.
	clusterScoped bool
}

var getTypes = []getType{
	// "rollout" is the per-template view; the plural is the Rollout objects.
	{names: []string{"rollout"}, list: listRollout},
	{names: []string{"policies", "policy"}, list: listSources(asPolicies, ppSource, cppSource)},
	{names: []string{"pp", "propagationpolicy", "propagationpolicies"}, list: listSources(asPolicies, ppSource)},
	{names: []string{"cpp", "clusterpropagationpolicy", "clusterpropagationpolicies"}, list: listSources(asPolicies, cppSource)},
	{names: []string{"bindings", "binding"}, list: listSources(asBindings, rbSource, crbSource)},
	{names: []string{"rb", "resourcebinding", "resourcebindings"}, list: listSources(asBindings, rbSource)},
	{names: []string{"crb", "clusterresourcebinding", "clusterresourcebindings"}, list: listSources(asBindings, crbSource)},
	{names: []string{"works", "work", "wk"}, list: listWorkObjects},
	{names: []string{"clusters", "cluster"}, list: listClusters, clusterScoped: true},
	{names: []string{"gates", "gate"}, list: listGates},
	{names: []string{"rollouts", "rollouts.rollouts.federator.dev"}, list: listSources(asRolloutObjects, rolloutSource)},
	{names: []string{"clusterrollouts", "clusterrollout", "clusterrollouts.rollouts.federator.dev"},
		list: listSources(asRolloutObjects, clusterRolloutSource), clusterScoped: true},
}

func getTypeNames() string {
	var out []string
	for _, t := range getTypes {
		out = append(out, t.names[0])
	}
	return strings.Join(out, ", ")
}

func resolveGetType(arg string) (getType, error) {
	typed := strings.ToLower(arg)
	for _, t := range getTypes {
		if slices.Contains(t.names, typed) {
			return t, nil
		}
	}
	return getType{}, fmt.Errorf("get %s: unknown kind of object; list one of: %s", arg, getTypeNames())
}

// renderListing prints l as the output format asks; state is what --watch
// compares (the objects, not the table, whose AGE column always moves).
func renderListing(l listing, output string, h *hub, list bool) (shown, state []byte, err error) {
	var buf bytes.Buffer
	state, err = json.Marshal(l.object(!list))
	if err != nil {
		return nil, nil, err
	}
	switch {
	case l.len() == 0 && list && (output == outputTable || output == outputWide):
		return nil, state, nil
	case output == outputTable || output == outputWide:
		err = l.table(output == outputWide, h).write(&buf)
	default:
		err = writeObject(&buf, output, l.object(!list))
	}
	return buf.Bytes(), state, err
}

func noneFound(what getType, h *hub) string {
	if h.allNamespaces || what.clusterScoped {
		return fmt.Sprintf("No %s found.", what.names[0])
	}
	return fmt.Sprintf("No %s found in namespace %s.", what.names[0], h.namespace)
}

// watchLoop prints render's output now and again whenever what it shows
// changes, until ctx ends (Ctrl-C). An error after the first listing is
// reported and retried: a watch outlives a hub restart.
func watchLoop(ctx context.Context, interval time.Duration, render func(context.Context) (shown, state []byte, err error), out, errOut io.Writer) error {
	var last []byte
	for first := true; ; first = false {
		shown, state, err := render(ctx)
		switch {
		case err != nil && first:
			return err
		case err != nil && ctx.Err() == nil:
			fmt.Fprintf(errOut, "federator: %v; retrying in %s\n", err, interval)
		case err == nil && !bytes.Equal(state, last):
			if last != nil {
				fmt.Fprintf(out, "\n")
			}
			if _, err := out.Write(shown); err != nil {
				return err
			}
			last = state
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// rolloutListing is `get rollout`.
type rolloutListing []templateRollout

func listRollout(ctx context.Context, h *hub, name string) (listing, error) {
	items, err := gatherRollouts(ctx, h, name)
	if err != nil {
		return nil, err
	}
	if name != "" && len(items) == 0 {
		where := "namespace " + h.namespace
		if h.allNamespaces {
			where = "any namespace"
		}
		return nil, fmt.Errorf("no propagated template named %q in %s: check the name and the namespace (-n), "+
			"and that a policy selects it (`federator get bindings`)", name, where)
	}
	return rolloutListing(items), nil
}

func (l rolloutListing) table(wide bool, h *hub) *table {
	return rolloutTable(l, wide, h.allNamespaces)
}

func (l rolloutListing) object(bool) any {
	items := []templateRollout(l)
	if items == nil {
		items = []templateRollout{}
	}
	return rolloutList{APIVersion: RolloutListVersion, Kind: RolloutListKind, Items: items}
}

func (l rolloutListing) len() int { return len(l) }
