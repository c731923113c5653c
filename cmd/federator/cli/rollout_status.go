package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// federator rollout status: where a Rollout stands, what it waits for, and
// waiting until it finishes.

func newRolloutStatusCommand(connect connector) *cobra.Command {
	var (
		conn     connection
		watch    bool
		timeout  time.Duration
		interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status NAME [-n NAMESPACE] [--watch=false] [--timeout DURATION]",
		Short: "Show a rollout's revision, stage and clusters; wait until it completes or fails",
		Long: `Show the rollout's revision, current stage, each cluster (stage, state,
revision released to it, since when, why) and what its conditions say.

Like kubectl rollout status, it then waits, reading the hub every --interval,
printing again whenever the status changes, until the Completed condition is
True (exit 0) or the Failed condition is True (exit 1, with the Failed
message). A status the rollout controller wrote for an older generation of
the spec is not trusted: it waits for the controller. A rollout paused for
promotion or by its suspended annotation keeps it waiting.

Exit codes: 0 completed; 1 failed, or an error (no such rollout, the hub does
not answer); 2 stopped waiting before either (--timeout passed, or Ctrl-C).
With --watch=false it prints once and exits 1 if the rollout failed, else 0.`,
		Example: `  federator rollout status web -n demo
  federator rollout status clusterrollout/platform --timeout 1h
  federator rollout status web -n demo --watch=false`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout < 0 || interval <= 0 {
				return fmt.Errorf("--timeout and --interval must be positive durations (e.g. 10m, 1s); --timeout 0 waits without limit")
			}
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return rolloutStatus(cmd.Context(), h, args[0], statusWait{watch: watch, timeout: timeout, interval: interval},
				cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	conn.addFlags(cmd.Flags(), false)
	cmd.Flags().BoolVarP(&watch, "watch", "w", true, "wait until the rollout completes or fails; false: print once")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "stop waiting after this long, exit 2 (default 0: no limit)")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "how often the hub is read while waiting")
	return cmd
}

type statusWait struct {
	watch             bool
	timeout, interval time.Duration
}

// rolloutVerdict is where a rollout stands for `rollout status`.
type rolloutVerdict int

const (
	verdictWaiting rolloutVerdict = iota
	verdictCompleted
	verdictFailed
)

// verdict reads the conditions, and only when the status is for the
// current spec.
func (r *rolloutObject) verdict() rolloutVerdict {
	switch {
	case !r.observed():
		return verdictWaiting
	case r.conditionTrue(rolloutsv1alpha1.ConditionFailed):
		return verdictFailed
	case r.conditionTrue(rolloutsv1alpha1.ConditionCompleted):
		return verdictCompleted
	}
	return verdictWaiting
}

// waitingFor says, in a line, what the rollout waits for now.
func (r *rolloutObject) waitingFor() string {
	if r.behind {
		return fmt.Sprintf("waiting for the rollout controller to take in the templates' new content (the status is for revision %d, before it)",
			r.status.Revision)
	}
	if !r.observed() {
		return fmt.Sprintf("waiting for the rollout controller to observe generation %d of the spec (the status is for generation %d)",
			r.obj.GetGeneration(), r.status.ObservedGeneration)
	}
	for _, t := range []string{rolloutsv1alpha1.ConditionPaused, rolloutsv1alpha1.ConditionProgressing} {
		if c := r.condition(t); c != nil && c.Status == metav1.ConditionTrue && c.Message != "" {
			return c.Message
		}
	}
	if r.status.CurrentStage != "" {
		return fmt.Sprintf("revision %d, stage '%s'", r.status.Revision, r.status.CurrentStage)
	}
	return fmt.Sprintf("revision %d", r.status.Revision)
}

// writeRolloutStatus prints the status block; an untrusted status prints
// only that the controller has not caught up.
func writeRolloutStatus(w io.Writer, r *rolloutObject, now time.Time) error {
	if !r.observed() {
		_, err := fmt.Fprintf(w, "%s: %s\n", r.ref(), r.waitingFor())
		return err
	}
	stage := r.status.CurrentStage
	if stage == "" {
		stage = "none (every stage reached)"
		if !r.conditionTrue(rolloutsv1alpha1.ConditionCompleted) {
			stage = "none"
		}
	} else {
		stage = "'" + stage + "'"
	}
	fmt.Fprintf(w, "%s: revision %d, current stage %s\n", r.ref(), r.status.Revision, stage)
	if len(r.status.Clusters) > 0 {
		t := &table{headers: []string{"CLUSTER", "STAGE", "STATE", "REVISION", "SINCE", "MESSAGE"}}
		analysed := slices.ContainsFunc(r.status.Clusters, func(c rolloutsv1alpha1.ClusterStatus) bool { return c.Analysis != nil })
		if analysed {
			t.headers = slices.Insert(t.headers, 5, "ANALYSIS")
		}
		for _, c := range r.status.Clusters {
			revision := ""
			if c.Revision != 0 {
				revision = fmt.Sprint(c.Revision)
			}
			since := ""
			if !c.Since.IsZero() {
				since = age(c.Since, now)
			}
			cells := []string{c.Name, c.Stage, c.State, revision, since, c.Message}
			if analysed {
				cells = slices.Insert(cells, 5, c.Analysis.Summary())
			}
			t.add(cells...)
		}
		if err := t.write(w); err != nil {
			return err
		}
	}
	for _, t := range []string{rolloutsv1alpha1.ConditionProgressing, rolloutsv1alpha1.ConditionPaused,
		rolloutsv1alpha1.ConditionCompleted, rolloutsv1alpha1.ConditionFailed} {
		if c := r.condition(t); c != nil && c.Status == metav1.ConditionTrue {
			fmt.Fprintf(w, "%s (%s): %s\n", c.Type, c.Reason, c.Message)
		}
	}
	return nil
}

// rolloutStatus prints the rollout and, with wait.watch, waits for it to
// complete or fail; its error carries the exit code.
func rolloutStatus(ctx context.Context, h *hub, arg string, wait statusWait, out, errOut io.Writer) error {
	waitCtx := ctx
	if wait.watch && wait.timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, wait.timeout)
		defer cancel()
	}
	r, err := getRollout(waitCtx, h, arg)
	if err != nil {
		if waitCtx.Err() != nil && ctx.Err() == nil {
			return &ExitError{Code: exitNotFinished, Err: fmt.Errorf("timed out after %s waiting for the hub at %s to answer", wait.timeout, h.host)}
		}
		return err
	}
	if !wait.watch {
		if err := writeRolloutStatus(out, r, h.now()); err != nil {
			return err
		}
		return statusResult(r)
	}
	var last []byte
	for {
		// What is compared is the object, not the printed block, whose
		// SINCE column moves by itself.
		state, err := json.Marshal(map[string]any{"generation": r.obj.GetGeneration(), "status": r.status})
		if err != nil {
			return err
		}
		if !bytes.Equal(state, last) {
			if last != nil {
				fmt.Fprintln(out)
			}
			if err := writeRolloutStatus(out, r, h.now()); err != nil {
				return err
			}
			last = state
		}
		if r.verdict() != verdictWaiting {
			return statusResult(r)
		}
		select {
		case <-waitCtx.Done():
			return notFinished(ctx, r, wait.timeout)
		case <-time.After(wait.interval):
		}
		next, err := readRollout(waitCtx, h, r.kind, r.obj.GetName())
		switch {
		case err == nil:
			r = next
		case waitCtx.Err() != nil:
			return notFinished(ctx, r, wait.timeout)
		case apierrors.IsNotFound(err):
			return fmt.Errorf("%s was deleted while waiting for it to complete", r.ref())
		default:
			// A wait outlives a hub restart: say so and read again.
			fmt.Fprintf(errOut, "federator: %v; retrying in %s\n", h.explain(err, "get", r.ref()), wait.interval)
		}
	}
}

// statusResult is the error (and so the exit code) for where r stands.
func statusResult(r *rolloutObject) error {
	if r.verdict() != verdictFailed {
		return nil
	}
	msg := r.condition(rolloutsv1alpha1.ConditionFailed).Message
	return &ExitError{Code: 1, Err: fmt.Errorf("%s failed at revision %d: %s", r.ref(), r.status.Revision, msg)}
}

func notFinished(ctx context.Context, r *rolloutObject, timeout time.Duration) error {
	why := fmt.Sprintf("timed out after %s", timeout)
	if ctx.Err() != nil {
		why = "interrupted"
	}
	return &ExitError{Code: exitNotFinished, Err: fmt.Errorf("%s waiting for %s to complete (condition Completed=True) or fail (Failed=True); last seen: %s",
		why, r.ref(), r.waitingFor())}
}
