package framework

import (
	"context"
	"encoding/json"
	"fmt"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// WorkKey is where the hub keeps the Work of template kind ns/name for
// member (ns is "" for a cluster-scoped template), by Karmada's names.
func WorkKey(member, kind, ns, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(member), Name: names.GenerateWorkName(kind, name, ns)}
}

// Work reads the Work of template kind ns/name for member.
func (e *Env) Work(ctx context.Context, member, kind, ns, name string) (*workv1alpha1.Work, error) {
	w := &workv1alpha1.Work{}
	if err := e.Hub.Get(ctx, WorkKey(member, kind, ns, name), w); err != nil {
		return nil, err
	}
	return w, nil
}

// WorkCondition is a condition of the Work of template kind ns/name for
// member; nil when the Work or the condition is missing.
func (e *Env) WorkCondition(ctx context.Context, member, kind, ns, name, conditionType string) *metav1.Condition {
	w, err := e.Work(ctx, member, kind, ns, name)
	if err != nil {
		return nil
	}
	return meta.FindStatusCondition(w.Status.Conditions, conditionType)
}

// WorkValue reads field from the template the Work of kind ns/name for
// member carries: what the hub wants there, dispatched or not; Absent
// without a Work.
func (e *Env) WorkValue(ctx context.Context, member, kind, ns, name string, field Field) string {
	w, err := e.Work(ctx, member, kind, ns, name)
	if err != nil {
		return Absent
	}
	u := workkeys.FirstManifest(w)
	if u == nil {
		return Absent
	}
	return field(u)
}

// WorkReadyReplicas is the ready replicas the Work of Deployment ns/name
// for member reports from the member; -1 when it reports no status.
func (e *Env) WorkReadyReplicas(ctx context.Context, member, ns, name string) int32 {
	w, err := e.Work(ctx, member, "Deployment", ns, name)
	if err != nil || len(w.Status.ManifestStatuses) == 0 || w.Status.ManifestStatuses[0].Status == nil {
		return -1
	}
	var s appsv1.DeploymentStatus
	if err := json.Unmarshal(w.Status.ManifestStatuses[0].Status.Raw, &s); err != nil {
		return -1
	}
	return s.ReadyReplicas
}

// WorksOf lists the Works, in every member's execution namespace, of the
// templates in namespace ns.
func (e *Env) WorksOf(ctx context.Context, ns string) ([]workv1alpha1.Work, error) {
	var out []workv1alpha1.Work
	for m := range e.Members {
		list := &workv1alpha1.WorkList{}
		if err := e.Hub.List(ctx, list, client.InNamespace(names.GenerateExecutionSpaceName(m))); err != nil {
			return nil, err
		}
		for _, w := range list.Items {
			if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] == ns {
				out = append(out, w)
			}
		}
	}
	return out, nil
}

// DispatchingReason is the reason of a Work's Dispatching condition, ""
// before the dispatcher has set it.
func DispatchingReason(w *workv1alpha1.Work) string {
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDispatching); c != nil {
		return c.Reason
	}
	return ""
}

// AppliedCurrent holds once the Work of template kind ns/name for member
// is applied at its current generation: the dispatcher has acted on what
// the Work says now, so whatever it wrote to the member is there.
func (e *Env) AppliedCurrent(ctx context.Context, member, kind, ns, name string) error {
	w, err := e.Work(ctx, member, kind, ns, name)
	if err != nil {
		return err
	}
	c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
		return fmt.Errorf("the Work %s at generation %d: Applied is %+v", client.ObjectKeyFromObject(w), w.Generation, c)
	}
	return nil
}

// HeldByDispatcher reports whether member's dispatcher holds the Work of
// kind ns/name at the spec the Work has now: its Dispatching condition is
// False for the Work's current generation. A spec that waits for it knows
// the dispatcher has seen that spec and not applied it, without sleeping.
func (e *Env) HeldByDispatcher(ctx context.Context, member, kind, ns, name string) bool {
	w, err := e.Work(ctx, member, kind, ns, name)
	if err != nil {
		return false
	}
	c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDispatching)
	return c != nil && c.Status == metav1.ConditionFalse && c.ObservedGeneration == w.Generation
}
