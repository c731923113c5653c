package binding

import (
	"context"
	"encoding/json"
	"fmt"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/countdown"
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
	manifest := workkeys.FirstManifest(work)
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
func (r *Reconciler) setDeletionDelay(b bindingview.View, tpl *unstructured.Unstructured, delay countdown.Delay) []func() {
	if !delay.Set {
		meta.RemoveStatusCondition(&b.Status.Conditions, workkeys.ConditionDeletionDelay)
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
	if !conditions.Set(&b.Status.Conditions, bindingview.Unstamped, c) || eventReason == "" {
		return nil
	}
	return []func(){func() {
		r.Recorder.Event(tpl, corev1.EventTypeWarning, eventReason, c.Message)
		r.Recorder.Event(b.Obj, corev1.EventTypeWarning, eventReason, c.Message)
	}}
}

// keepForCountdown keeps work, the Work of a cluster no longer targeted,
// instead of deleting it, when that cluster pulls its Works and the
// object carries a deletion delay (countdown.KeepWork): its agent may
// delete the object as soon as the Work goes. False when the Work is to
// be deleted as usual; an error is added to errs and the Work kept.
func (r *Reconciler) keepForCountdown(ctx context.Context, work *workv1alpha1.Work, pull map[string]bool, errs *[]error) bool {
	cluster, err := names.GetClusterName(work.Namespace)
	if err != nil || !pull[cluster] || len(work.Spec.Workload.Manifests) != 1 {
		return false
	}
	manifest := workkeys.FirstManifest(work)
	if manifest == nil || !countdown.Delayed(manifest) {
		return false
	}
	outcome, err := countdown.KeepWork(ctx, r.Client, r.fresh(), r.Recorder, cluster, work, r.now())
	if err != nil {
		*errs = append(*errs, fmt.Errorf("cluster %s: %w", cluster, err))
	} else if outcome != "" {
		ctrl.LoggerFrom(ctx).V(1).Info(outcome, "work", client.ObjectKeyFromObject(work))
	}
	return true
}

// keptForCountdown is keepForCountdown for a Work the hub keeps already
// (marked): false for any other.
func (r *Reconciler) keptForCountdown(ctx context.Context, work *workv1alpha1.Work, pull map[string]bool, errs *[]error) bool {
	if _, marked := countdown.StartedAt(work); !marked {
		return false
	}
	return r.keepForCountdown(ctx, work, pull, errs)
}
