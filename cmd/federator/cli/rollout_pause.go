package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// federator rollout pause, resume and promote: the annotations a person
// writes on a Rollout to stop it, let it go on, or skip its soak.

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
