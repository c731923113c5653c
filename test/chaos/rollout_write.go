package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// Writing the Rollout operations as `kubectl apply`/`delete` and
// `federator rollout pause|resume|promote` do.

const (
	rolloutName = "chaos"
	// promotedStage is the stage that pauses until promoted.
	promotedStage = "approve"
	// canarySoak is the first stage's minSuccessTime.
	canarySoak = 2 * time.Second
	// rolloutTakeIn is how long a created Rollout may take to take in its
	// first revision (status.revision 1) before the run gives up.
	rolloutTakeIn = time.Minute
	// promoteWait is how long a promote waits for its stage to wait.
	promoteWait = 6 * time.Second
)

// chaosStages split the members: the first alone and soaking, then the
// second, which waits for a promote; the others form the implicit last
// stage.
func chaosStages(members []string) []stageSpec {
	return []stageSpec{{Name: "canary", Clusters: members[:1], Soak: canarySoak},
		{Name: promotedStage, Clusters: members[1:2], Pause: true}}
}

// stageGate is the gate the promoted stage waits for too, in runs with
// Gates: the scheduled one, a maintenance window that opens for 20 s
// every minute, which the run also opens, closes and deletes while
// Rollouts walk.
const stageGate = "scheduled"

// gatedStages are chaosStages with the promoted stage waiting for
// stageGate.
func gatedStages(members []string) []stageSpec {
	stages := chaosStages(members)
	stages[1].Gates = []string{stageGate}
	return stages
}

func rolloutObject(r *rolloutState) *rolloutsv1alpha1.Rollout {
	ro := &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: rolloutName},
		Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: policyName}}}
	for _, st := range r.Stages {
		stage := rolloutsv1alpha1.Stage{Name: st.Name, Clusters: st.Clusters, Pause: st.Pause, Gates: st.Gates}
		if st.Soak > 0 {
			stage.MinSuccessTime = &metav1.Duration{Duration: st.Soak}
		}
		ro.Spec.Stages = append(ro.Spec.Stages, stage)
	}
	return ro
}

// writeRollout sends a Rollout operation; next is the state it leaves (a
// promote fills in its time), sent when the write that took effect was
// sent.
func writeRollout(ctx context.Context, hub client.Client, o op, next *state, sent *time.Time) error {
	key := client.ObjectKey{Namespace: namespace, Name: rolloutName}
	ro := &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: rolloutName}}
	switch o.Kind {
	case opRolloutCreate:
		// Deleted a moment ago, it may linger.
		if err := createAgain(ctx, sent, func() error { return hub.Create(ctx, rolloutObject(next.Rollout)) }); err != nil {
			return err
		}
		// The write returns once the Rollout took in its first revision,
		// released everywhere at once: the versions of next (or older
		// ones, which the holds judge), never a later write's.
		deadline := time.Now().Add(rolloutTakeIn)
		for {
			err := hub.Get(ctx, key, ro)
			if err == nil && ro.Status.Revision >= 1 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the Rollout took in no revision within %s (status %+v, error %v)", rolloutTakeIn, ro.Status, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	case opRolloutPause:
		var v any
		if next.Rollout.Paused {
			v = holdReason
		}
		raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{policykeys.SuspendedAnnotation: v}}})
		return hub.Patch(ctx, ro, client.RawPatch(types.MergePatchType, raw))
	case opRolloutPromote:
		// As a person watching `federator rollout status` does: wait a
		// little for the stage to wait for its promote (the operations
		// stop meanwhile, so a revision can get through the first stage),
		// then `federator rollout promote --stage`: the revision the
		// status names then.
		deadline := time.Now().Add(promoteWait)
		for {
			*sent = time.Now()
			if err := hub.Get(ctx, key, ro); err != nil {
				return err
			}
			c := meta.FindStatusCondition(ro.Status.Conditions, rolloutsv1alpha1.ConditionPaused)
			if c != nil && c.Status == metav1.ConditionTrue && c.Reason == rolloutsv1alpha1.ReasonWaitingForPromotion || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
		raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			rolloutsv1alpha1.PromoteAnnotation: fmt.Sprintf("%d/%s", ro.Status.Revision, o.Stage)}}})
		if err := hub.Patch(ctx, ro, client.RawPatch(types.MergePatchType, raw)); err != nil {
			return err
		}
		if next.Rollout.Promoted == nil {
			next.Rollout.Promoted = map[string]time.Time{}
		}
		next.Rollout.Promoted[o.Stage] = *sent
		return nil
	case opRolloutDelete:
		return hub.Delete(ctx, ro)
	}
	return fmt.Errorf("unknown Rollout operation %s", o.Kind)
}

// stageSelfTest is the store --self-test makes that only the stage check
// can report.
type stageSelfTest struct{ template, member, version string }

// selfTestStage lifts every hold and waits for the members to converge,
// creates the Rollout, writes a new version of the ConfigMap to the hub
// and at once, behind the hub's back, to a member of a later stage: every
// hold releases it there, but the Rollout does not (the first stage has
// not stored it and soaked, and the second was not promoted). The checker
// must report it as the Rollout's. The member's copy is patched, never
// created: one the hub did not create it would not take over (Karmada's
// conflict resolution), and the member would never converge.
func (r *chaosRun) selfTestStage(ctx context.Context, g *generator, step int) error {
	res, err := r.settle(ctx, step, "self-test")
	if err != nil {
		return err
	}
	if len(res.stale) > 0 {
		return fmt.Errorf("self-test: the members did not converge before the Rollout was created: %s", strings.Join(res.stale, "; "))
	}
	if err := r.writeOp(ctx, step, "self-test", op{Kind: opRolloutCreate}, func(n *state) { n.Rollout = &rolloutState{Stages: chaosStages(r.names)} }); err != nil {
		return err
	}
	o := op{Kind: opVersion, Template: configMap, Version: g.newVersion(configMap)}
	if err := r.writeOp(ctx, step, "self-test", o, func(n *state) {
		t := n.Templates[configMap]
		t.Version = o.Version
		n.Templates[configMap] = t
	}); err != nil {
		return err
	}
	member := r.names[len(r.names)-1]
	if member == r.paused {
		member = r.names[1]
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = r.members[member].Patch(ctx, templateObject(configMap),
		client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"data":{"version":%q}}`, o.Version)), client.FieldOwner(selfTestOwner))
	if err != nil {
		return fmt.Errorf("self-test write to %s: %w", member, err)
	}
	r.stageSelfTest = &stageSelfTest{template: configMap, member: member, version: o.Version}
	logf("self-test: step %d lifted every hold, created the Rollout, and wrote %s %s to the hub and straight to %s, of a later stage",
		step, configMap, o.Version, member)
	return nil
}
