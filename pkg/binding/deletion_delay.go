package binding

import (
	"context"
	"encoding/json"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/works"
)

// withDeletionDelay puts the delay in force on a member manifest: the
// template's own value, else its policy's default, capped. The dispatcher
// reads it there when it would delete the member copy.
func withDeletionDelay(manifest *unstructured.Unstructured, delay countdown.Delay) {
	annotations := manifest.GetAnnotations()
	if v := delay.ManifestValue(); v != "" {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[policykeys.DeletionDelayAnnotation] = v
	} else {
		delete(annotations, policykeys.DeletionDelayAnnotation)
	}
	manifest.SetAnnotations(annotations)
}

// carryDelay makes a Work about to be deleted carry the delay in force
// now: one kept while the delay could not be read still carries the bad
// value, and the dispatcher counts down by what the deleted Work carries.
func (r *Reconciler) carryDelay(ctx context.Context, work *workv1alpha1.Work, delay countdown.Delay) error {
	if len(work.Spec.Workload.Manifests) != 1 {
		return nil
	}
	manifest := works.FirstManifest(work)
	if manifest == nil || manifest.GetAnnotations()[policykeys.DeletionDelayAnnotation] == delay.ManifestValue() {
		return nil
	}
	withDeletionDelay(manifest, delay)
	raw, err := json.Marshal(manifest.Object)
	if err != nil {
		return err
	}
	work.Spec.Workload.Manifests[0].Raw = raw
	return r.Client.Update(ctx, work)
}

// setDeletionDelay records on the binding whether the delay in force can be
// honoured as written, and returns the events, on the template and the
// binding, of a transition to a capped or invalid delay. No condition when
// no delay is set.
func (r *Reconciler) setDeletionDelay(b view, tpl *unstructured.Unstructured, delay countdown.Delay) []func() {
	if !delay.Set {
		meta.RemoveStatusCondition(&b.status.Conditions, workkeys.ConditionDeletionDelay)
		return nil
	}
	c := metav1.Condition{Type: workkeys.ConditionDeletionDelay, Status: metav1.ConditionTrue,
		Reason: workkeys.ReasonDeletionDelayValid, Message: delay.Message(r.MaxDeletionDelay)}
	eventReason := ""
	switch {
	case delay.Problem != "":
		c.Status, c.Reason = metav1.ConditionFalse, workkeys.ReasonInvalidDeletionDelay
		eventReason = policykeys.EventReasonInvalidDeletionDelay
	case delay.Capped:
		c.Reason = workkeys.ReasonDeletionDelayCapped
		eventReason = policykeys.EventReasonDeletionDelayCapped
	}
	if !conditions.Set(&b.status.Conditions, unstamped, c) || eventReason == "" {
		return nil
	}
	return []func(){func() {
		r.Recorder.Event(tpl, corev1.EventTypeWarning, eventReason, c.Message)
		r.Recorder.Event(b.obj, corev1.EventTypeWarning, eventReason, c.Message)
	}}
}
