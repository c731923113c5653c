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

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/revision"
	"github.com/federator-dev/federator/pkg/placement"
)

// remainingStage is the name of the implicit last stage.
const remainingStage = rolloutsv1alpha1.RemainingStage

// Exit codes of `rollout status` besides 0 (completed) and 1 (failed, or
// any error before the status could be read).
const (
	// exitNotFinished: the wait ended (--timeout, Ctrl-C) before the
	// rollout completed or failed; distinct from 1 so a script can tell
	// "it failed" from "it is still going".
	exitNotFinished = 2
)

// rolloutKind is Rollout or ClusterRollout.
type rolloutKind struct {
	kind       string
	resource   string
	namespaced bool
	// policyKind is the kind spec.policyRef names.
	policyKind string
}

var (
	namespacedRollout = rolloutKind{kind: "Rollout", resource: "rollouts.rollouts.federator.dev", namespaced: true,
		policyKind: kindPropagationPolicy}
	clusterScopedRollout = rolloutKind{kind: "ClusterRollout", resource: "clusterrollouts.rollouts.federator.dev",
		policyKind: kindClusterPropagationPolicy}
)

func (k rolloutKind) newObject() client.Object {
	if k.namespaced {
		return &rolloutsv1alpha1.Rollout{}
	}
	return &rolloutsv1alpha1.ClusterRollout{}
}

// parseRolloutArg reads NAME as `kubectl rollout status` reads
// deployment/web: "web" and "rollout/web" are a Rollout in the namespace,
// "clusterrollout/web" a ClusterRollout.
func parseRolloutArg(arg string) (rolloutKind, string, error) {
	prefix, name, found := strings.Cut(arg, "/")
	if !found {
		prefix, name = "rollout", arg
	}
	if name == "" || strings.Contains(name, "/") {
		return rolloutKind{}, "", fmt.Errorf("%q: name a Rollout as NAME or rollout/NAME, a ClusterRollout as clusterrollout/NAME", arg)
	}
	switch strings.ToLower(prefix) {
	case "rollout", "rollouts", "rollouts.rollouts.federator.dev":
		return namespacedRollout, name, nil
	case "clusterrollout", "clusterrollouts", "clusterrollouts.rollouts.federator.dev":
		return clusterScopedRollout, name, nil
	}
	return rolloutKind{}, "", fmt.Errorf("%q: %s is not a kind of rollout; name a Rollout as NAME or rollout/NAME, a ClusterRollout as clusterrollout/NAME",
		arg, prefix)
}

// rolloutObject is a Rollout or ClusterRollout as read from the hub.
type rolloutObject struct {
	kind   rolloutKind
	obj    client.Object
	spec   *rolloutsv1alpha1.RolloutSpec
	status *rolloutsv1alpha1.RolloutStatus
	// behind: a template's content changed and the controller has not
	// taken it in yet, so the status is about the content before.
	behind bool
}

func asRolloutObject(k rolloutKind, obj client.Object) *rolloutObject {
	switch o := obj.(type) {
	case *rolloutsv1alpha1.Rollout:
		return &rolloutObject{kind: k, obj: o, spec: &o.Spec, status: &o.Status}
	case *rolloutsv1alpha1.ClusterRollout:
		return &rolloutObject{kind: k, obj: o, spec: &o.Spec, status: &o.Status}
	}
	panic(fmt.Sprintf("not a rollout: %T", obj))
}

func (r *rolloutObject) ref() ref {
	return ref{kind: r.kind.kind, namespace: r.obj.GetNamespace(), name: r.obj.GetName(), resource: r.kind.resource}
}

// arg is how a person names it again on the command line.
func (r *rolloutObject) arg() string {
	if r.kind.namespaced {
		return r.obj.GetName()
	}
	return "clusterrollout/" + r.obj.GetName()
}

// observed reports whether the status is the controller's answer to the
// current spec; until it is, nothing in it is trusted.
func (r *rolloutObject) observed() bool {
	return r.status.ObservedGeneration == r.obj.GetGeneration() && !r.behind
}

func (r *rolloutObject) condition(t string) *metav1.Condition {
	return meta.FindStatusCondition(r.status.Conditions, t)
}

func (r *rolloutObject) conditionTrue(t string) bool {
	c := r.condition(t)
	return c != nil && c.Status == metav1.ConditionTrue
}

// getRollout reads the rollout arg names.
func getRollout(ctx context.Context, h *hub, arg string) (*rolloutObject, error) {
	k, name, err := parseRolloutArg(arg)
	if err != nil {
		return nil, err
	}
	r, err := readRollout(ctx, h, k, name)
	return r, explainRollout(h, k, name, err)
}

// readRollout reads a rollout; its error is the hub's, unexplained.
func readRollout(ctx context.Context, h *hub, k rolloutKind, name string) (*rolloutObject, error) {
	namespace := ""
	if k.namespaced {
		namespace = h.namespace
	}
	obj := k.newObject()
	if err := h.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		return nil, err
	}
	r := asRolloutObject(k, obj)
	// A template changed a moment ago is not in the status yet: until the
	// controller takes it in, the status is about the content before, and
	// "completed" would be an answer to the wrong question.
	ro := revision.Rollout{Obj: r.obj, Spec: r.spec, Status: r.status, Kind: k.kind}
	claimed, err := revision.ClaimedBy(ctx, h.client, k.policyKind, namespace, r.spec.PolicyRef.Name)
	if err != nil {
		return nil, err
	}
	if r.behind, err = revision.Behind(ctx, h.client, ro, claimed); err != nil {
		return nil, err
	}
	return r, nil
}

func explainRollout(h *hub, k rolloutKind, name string, err error) error {
	if err == nil {
		return nil
	}
	r := ref{kind: k.kind, name: name, resource: k.resource}
	if k.namespaced {
		r.namespace = h.namespace
	}
	explained := h.explain(err, "get", r)
	if k.namespaced && apierrors.IsNotFound(err) {
		return fmt.Errorf("%w; a ClusterRollout is named clusterrollout/%s", explained, name)
	}
	return explained
}

func newRolloutCommand(connect connector) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout status|pause|resume|promote|plan|abort|undo NAME",
		Short: "Follow and steer a Rollout (rollouts.federator.dev): status, pause, resume, promote, plan, abort, undo",
		Long: `Follow and steer a staged rollout. NAME is a Rollout in the namespace (-n), as
NAME or rollout/NAME, or a ClusterRollout as clusterrollout/NAME.

These commands read what the rollout controller wrote in the Rollout's status
and write annotations on it; the controller decides everything else.`,
		Example: `  federator rollout status web -n demo --timeout 30m
  federator rollout pause web -n demo -m "incident 42"
  federator rollout promote clusterrollout/platform`,
	}
	cmd.AddCommand(newRolloutStatusCommand(connect), newRolloutPauseCommand(connect), newRolloutResumeCommand(connect),
		newRolloutPromoteCommand(connect), newRolloutPlanCommand(connect), newRolloutAbortCommand(connect), newRolloutUndoCommand(connect))
	return cmd
}

// --- status -----------------------------------------------------------------

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
		for _, c := range r.status.Clusters {
			revision := ""
			if c.Revision != 0 {
				revision = fmt.Sprint(c.Revision)
			}
			since := ""
			if !c.Since.IsZero() {
				since = age(c.Since, now)
			}
			t.add(c.Name, c.Stage, c.State, revision, since, c.Message)
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

// --- pause, resume ----------------------------------------------------------

func newRolloutPauseCommand(connect connector) *cobra.Command {
	var (
		conn   connection
		reason string
	)
	cmd := &cobra.Command{
		Use:   "pause NAME [-n NAMESPACE] [-m REASON]",
		Short: "Pause a rollout: no cluster gets more of the current revision until it is resumed",
		Long: `Pause a rollout by setting the annotation propagation.federator.dev/suspended
on it, its value the reason (-m), "true" when none is given. The rollout
controller releases nothing more while it is there; clusters keep what they
have. Pausing again updates the reason.`,
		Example: `  federator rollout pause web -n demo -m "incident 42: 5xx on checkout"`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return setRolloutPause(cmd.Context(), h, cmd.OutOrStdout(), args[0], reason, true)
		},
	}
	conn.addFlags(cmd.Flags(), false)
	cmd.Flags().StringVarP(&reason, "message", "m", "", "the `REASON`, for the people who read it on the Rollout")
	return cmd
}

func newRolloutResumeCommand(connect connector) *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "resume NAME [-n NAMESPACE]",
		Short: "Resume a paused rollout: remove its suspended annotation",
		Long: `Remove the annotation propagation.federator.dev/suspended from a rollout, so
the rollout controller goes on. A stage that waits for promotion still waits:
` + "`federator rollout promote`" + ` starts it.`,
		Example: `  federator rollout resume web -n demo`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return setRolloutPause(cmd.Context(), h, cmd.OutOrStdout(), args[0], "", false)
		},
	}
	conn.addFlags(cmd.Flags(), false)
	return cmd
}

// setRolloutPause writes (or removes) the suspended annotation, only when
// that changes it, and says what changed.
func setRolloutPause(ctx context.Context, h *hub, out io.Writer, arg, reason string, pause bool) error {
	r, err := getRollout(ctx, h, arg)
	if err != nil {
		return err
	}
	var change annotationChange
	if pause {
		change = suspendChanges(r.obj.GetAnnotations(), nil, reason)[0]
	} else {
		change = resumeChanges(r.obj.GetAnnotations(), nil)[0]
	}
	if patch := mergePatch([]annotationChange{change}); patch != nil {
		if err := h.client.Patch(ctx, r.obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return h.explain(err, "patch", r.ref())
		}
	}
	fmt.Fprintln(out, describePause(r, change))
	return nil
}

func describePause(r *rolloutObject, c annotationChange) string {
	name := r.ref()
	switch {
	case c.after != nil && c.before == nil:
		return fmt.Sprintf("%s paused%s", name, pauseReason(*c.after))
	case c.after != nil && !c.writes():
		return fmt.Sprintf("%s already paused%s; nothing changed", name, pauseReason(*c.after))
	case c.after != nil:
		return fmt.Sprintf("%s already paused; reason updated from %s to %s", name, reasonText(*c.before), reasonText(*c.after))
	case c.before == nil:
		msg := fmt.Sprintf("%s is not paused by annotation %s; nothing to resume", name, c.key)
		if p := r.condition(rolloutsv1alpha1.ConditionPaused); r.observed() && p != nil && p.Status == metav1.ConditionTrue &&
			p.Reason == rolloutsv1alpha1.ReasonWaitingForPromotion {
			msg += fmt.Sprintf("; it waits for promotion: `federator rollout promote %s` starts the stage", r.arg())
		}
		return msg
	}
	return fmt.Sprintf("%s resumed: annotation %s removed (reason was %s)", name, c.key, reasonText(*c.before))
}

// pauseReason is `: "reason"`, or "" when none was given.
func pauseReason(value string) string {
	if value == "true" {
		return ""
	}
	return fmt.Sprintf(": %q", value)
}

// --- promote ----------------------------------------------------------------

func newRolloutPromoteCommand(connect connector) *cobra.Command {
	var (
		conn  connection
		stage string
	)
	cmd := &cobra.Command{
		Use:   "promote NAME [-n NAMESPACE] [--stage STAGE]",
		Short: "Let a stage that pauses until promoted start, for the current revision",
		Long: `Promote a stage of the rollout's current revision by setting the annotation
rollouts.federator.dev/promote to "<revision>/<stage>". Without --stage it is
the stage the rollout waits at (its Paused condition's reason is
WaitingForPromotion); with --stage, a stage of spec.stages that pauses, so a
later one can be promoted ahead. A promotion holds for that revision only.`,
		Example: `  federator rollout promote web -n demo
  federator rollout promote clusterrollout/platform --stage prod`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			msg, err := promoteRollout(cmd.Context(), h, args[0], stage)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
	conn.addFlags(cmd.Flags(), false)
	cmd.Flags().StringVar(&stage, "stage", "", "the stage to promote (default: the stage the rollout waits at for promotion)")
	return cmd
}

// promoteRollout writes the promote annotation for the stage the rollout
// waits at, or the one named; it refuses what would promote nothing.
func promoteRollout(ctx context.Context, h *hub, arg, stage string) (string, error) {
	r, err := getRollout(ctx, h, arg)
	if err != nil {
		return "", err
	}
	name := r.ref()
	if !r.observed() || r.status.Revision == 0 {
		return "", fmt.Errorf("%s: nothing promoted: %s; try again once it has (`federator rollout status %s`)",
			name, r.waitingFor(), r.arg())
	}
	paused := r.condition(rolloutsv1alpha1.ConditionPaused)
	waitsForPromotion := paused != nil && paused.Status == metav1.ConditionTrue && paused.Reason == rolloutsv1alpha1.ReasonWaitingForPromotion
	if stage == "" {
		switch {
		case waitsForPromotion && r.status.CurrentStage != "":
			stage = r.status.CurrentStage
		case paused != nil && paused.Status == metav1.ConditionTrue && paused.Reason == rolloutsv1alpha1.ReasonSuspended:
			return "", fmt.Errorf("%s is paused by its annotation %s, not waiting for promotion: `federator rollout resume %s` resumes it",
				name, policykeys.SuspendedAnnotation, r.arg())
		default:
			return "", fmt.Errorf("%s: no stage waits for promotion (%s); to promote a later stage ahead, name it with --stage (stages: %s)",
				name, r.waitingFor(), strings.Join(stageNames(r.spec), ", "))
		}
	}
	i := slices.IndexFunc(r.spec.Stages, func(s rolloutsv1alpha1.Stage) bool { return s.Name == stage })
	switch {
	case i < 0:
		return "", fmt.Errorf("%s has no stage %q in spec.stages (stages: %s); name one of those with --stage",
			name, stage, strings.Join(stageNames(r.spec), ", "))
	case !r.spec.Stages[i].Pause:
		return "", fmt.Errorf("%s: stage '%s' does not pause until promoted (its pause is false), so promoting it changes nothing", name, stage)
	}
	value := fmt.Sprintf("%d/%s", r.status.Revision, stage)
	what := fmt.Sprintf("%s: stage '%s' of revision %d promoted (annotation %s=%s)", name, stage, r.status.Revision,
		rolloutsv1alpha1.PromoteAnnotation, value)
	if r.obj.GetAnnotations()[rolloutsv1alpha1.PromoteAnnotation] == value {
		return fmt.Sprintf("%s: stage '%s' of revision %d is already promoted; nothing changed", name, stage, r.status.Revision), nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		rolloutsv1alpha1.PromoteAnnotation: value}}})
	if err != nil {
		return "", err
	}
	if err := h.client.Patch(ctx, r.obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return "", h.explain(err, "patch", name)
	}
	return what + fmt.Sprintf("; `federator rollout status %s` follows it", r.arg()), nil
}

func stageNames(spec *rolloutsv1alpha1.RolloutSpec) []string {
	out := make([]string, 0, len(spec.Stages))
	for _, s := range spec.Stages {
		out = append(out, s.Name)
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// --- plan -------------------------------------------------------------------

func newRolloutPlanCommand(connect connector) *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "plan NAME [-n NAMESPACE]",
		Short: "Show which clusters each stage of a rollout reaches",
		Long: `Resolve the rollout's stages against the hub's Clusters and its policy's
placement, as they are now: a stage's clusters are those it names, then those
its clusterSelector selects by Cluster labels among the placed clusters no
earlier stage has; the placed clusters no stage has form the implicit last
stage, "` + remainingStage + `". A named cluster that is not registered, or that the policy
does not place, is reported and reached by no stage. The placement is the
policy's (clusterAffinity or clusterAffinities, as the hub places); a template
whose kind a cluster does not serve skips that cluster on top of this.`,
		Example: `  federator rollout plan web -n demo
  federator rollout plan clusterrollout/platform`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := connect(conn)
			if err != nil {
				return err
			}
			return rolloutPlan(cmd.Context(), h, cmd.OutOrStdout(), args[0])
		},
	}
	conn.addFlags(cmd.Flags(), false)
	return cmd
}

// plannedStage is one stage as `rollout plan` resolves it.
type plannedStage struct {
	name     string
	by       string
	clusters []string
	notes    []string
}

// planStages resolves stages to clusters: placed are the clusters the
// policy places (sorted), registered every Cluster on the hub.
func planStages(stages []rolloutsv1alpha1.Stage, placed []string, registered []clusterv1alpha1.Cluster) []plannedStage {
	byName := map[string]*clusterv1alpha1.Cluster{}
	for i := range registered {
		byName[registered[i].Name] = &registered[i]
	}
	stageOf := map[string]string{}
	var out []plannedStage
	for _, s := range stages {
		p := plannedStage{name: s.Name}
		var by []string
		if len(s.Clusters) > 0 {
			by = append(by, "names")
		}
		for _, name := range s.Clusters {
			switch {
			case byName[name] == nil:
				p.notes = append(p.notes, name+": no such Cluster")
			case !slices.Contains(placed, name):
				p.notes = append(p.notes, name+": not placed by the policy")
			case stageOf[name] != "":
				p.notes = append(p.notes, fmt.Sprintf("%s: already in stage '%s'", name, stageOf[name]))
			default:
				stageOf[name] = s.Name
				p.clusters = append(p.clusters, name)
			}
		}
		if s.ClusterSelector != nil {
			selector, err := metav1.LabelSelectorAsSelector(s.ClusterSelector)
			if err != nil {
				p.notes = append(p.notes, "clusterSelector does not parse: "+err.Error())
				by = append(by, "selector (invalid)")
			} else {
				by = append(by, "selector "+selector.String())
				for _, name := range placed {
					if c := byName[name]; c != nil && stageOf[name] == "" && selector.Matches(labels.Set(c.Labels)) {
						stageOf[name] = s.Name
						p.clusters = append(p.clusters, name)
					}
				}
			}
		}
		if len(p.clusters) == 0 {
			p.notes = append(p.notes, "reaches no cluster; the stage is skipped")
		}
		slices.Sort(p.clusters)
		p.by = strings.Join(by, " + ")
		out = append(out, p)
	}
	rest := plannedStage{name: remainingStage, by: "placed, in no stage"}
	for _, name := range placed {
		if stageOf[name] == "" {
			rest.clusters = append(rest.clusters, name)
		}
	}
	return append(out, rest)
}

func rolloutPlan(ctx context.Context, h *hub, out io.Writer, arg string) error {
	r, err := getRollout(ctx, h, arg)
	if err != nil {
		return err
	}
	policyRef := ref{kind: r.kind.policyKind, name: r.spec.PolicyRef.Name, resource: "propagationpolicies.policy.karmada.io"}
	if r.kind.namespaced {
		policyRef.namespace = r.obj.GetNamespace()
	} else {
		policyRef.resource = "clusterpropagationpolicies.policy.karmada.io"
	}
	stored, err := getObject(ctx, h.client, policyv1alpha1.SchemeGroupVersion.WithKind(policyRef.kind), policyRef.namespace, policyRef.name)
	if err != nil {
		return fmt.Errorf("%s (its spec.policyRef): %w", r.ref(), h.explain(err, "get", policyRef))
	}
	spec, err := policykeys.StoredSpec(stored)
	if err != nil {
		return err
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := h.client.List(ctx, clusters); err != nil {
		return h.explain(err, "list", ref{kind: "Clusters", resource: "clusters.cluster.karmada.io"})
	}
	placed, err := placement.Place(&spec.Placement, clusters.Items, 0)
	if err != nil {
		return fmt.Errorf("%s: the placement of %s cannot be resolved: %w", r.ref(), policyRef, err)
	}
	var placedNames []string
	for _, t := range placed.Targets {
		placedNames = append(placedNames, t.Name)
	}
	slices.Sort(placedNames)
	fmt.Fprintf(out, "%s rolls out what %s places on %d cluster(s), in this order; the placed clusters no stage has go to the last stage, %q:\n",
		r.ref(), policyRef, len(placedNames), remainingStage)
	for _, u := range placed.Unknown {
		fmt.Fprintf(out, "%s: placement names %s: no such Cluster\n", policyRef, u)
	}
	t := &table{headers: []string{"STAGE", "BY", "CLUSTERS", "NOTES"}}
	for _, s := range planStages(r.spec.Stages, placedNames, clusters.Items) {
		t.add(s.name, s.by, strings.Join(s.clusters, ","), strings.Join(s.notes, "; "))
	}
	return t.write(out)
}

// --- get rollouts, get clusterrollouts --------------------------------------

var (
	rolloutSource = source{kind: namespacedRollout.kind, resource: namespacedRollout.resource, namespaced: true,
		object: func() client.Object { return &rolloutsv1alpha1.Rollout{} },
		list:   func() client.ObjectList { return &rolloutsv1alpha1.RolloutList{} }}
	clusterRolloutSource = source{kind: clusterScopedRollout.kind, resource: clusterScopedRollout.resource,
		object: func() client.Object { return &rolloutsv1alpha1.ClusterRollout{} },
		list:   func() client.ObjectList { return &rolloutsv1alpha1.ClusterRolloutList{} }}
)

// rolloutObjectListing is `get rollouts|clusterrollouts`: the Rollout
// objects, not the per-template view of `get rollout`.
type rolloutObjectListing struct{ objects }

func asRolloutObjects(items objects, _ bool) listing { return rolloutObjectListing{items} }

func (l rolloutObjectListing) table(wide bool, h *hub) *table {
	t := &table{headers: withNamespace(h.allNamespaces, "NAMESPACE", "NAME", "REVISION", "STAGE", "HEALTHY/TOTAL", "AGE")}
	if wide {
		t.headers = append(t.headers, "POLICY")
	}
	for _, obj := range l.objects {
		r := asRolloutObject(namespacedRollout, obj)
		healthy := 0
		for _, c := range r.status.Clusters {
			if c.State == rolloutsv1alpha1.StateHealthy {
				healthy++
			}
		}
		revision := ""
		if r.status.Revision != 0 {
			revision = fmt.Sprint(r.status.Revision)
		}
		cells := withNamespace(h.allNamespaces, obj.GetNamespace(), obj.GetName(), revision, r.status.CurrentStage,
			fmt.Sprintf("%d/%d", healthy, len(r.status.Clusters)), age(obj.GetCreationTimestamp(), h.now()))
		if wide {
			cells = append(cells, r.spec.PolicyRef.Name)
		}
		t.add(cells...)
	}
	return t
}
