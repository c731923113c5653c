package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/revision"
	"github.com/federator-dev/federator/pkg/gatestate"
)

// What a step of the stage machine reads: each cluster's health at the
// current content, the stages' clusters, and the gates a stage waits on.

// health says, per placed cluster, whether every template is healthy there
// at its current content: the cluster's Work carries what the cluster gets
// of it (overrides applied), is not
// held, is applied at its generation, and the member object is healthy
// (manifestHealth).
func (r *Reconciler) health(ctx context.Context, bindings []binding) (map[string]bool, map[string]string, error) {
	healthy := map[string]bool{}
	unhealthy := map[string]bool{}
	heldElsewhere := map[string]string{}
	for _, b := range bindings {
		for _, t := range b.Spec.Clusters {
			w := &workv1alpha1.Work{}
			err := r.Client.Get(ctx, client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(t.Name), Name: b.workName}, w)
			if apierrors.IsNotFound(err) {
				unhealthy[t.Name] = true
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			if reason := w.Annotations[workkeys.HoldReasonAnnotation]; ptr.Deref(w.Spec.SuspendDispatching, false) &&
				reason != "" && reason != workkeys.ReasonRolloutStage && heldElsewhere[t.Name] == "" {
				heldElsewhere[t.Name] = w.Annotations[workkeys.HoldMessageAnnotation]
			}
			if workHealthy(w, b.hashFor(t.Name)) {
				healthy[t.Name] = true
			} else {
				unhealthy[t.Name] = true
			}
		}
	}
	for c := range unhealthy {
		delete(healthy, c)
	}
	return healthy, heldElsewhere, nil
}

func workHealthy(w *workv1alpha1.Work, hash string) bool {
	if hash == "" || w.Annotations[workkeys.TemplateHashAnnotation] != hash || ptr.Deref(w.Spec.SuspendDispatching, false) ||
		!w.DeletionTimestamp.IsZero() {
		return false
	}
	applied := meta.FindStatusCondition(w.Status.Conditions, workkeys.ConditionApplied)
	if applied == nil || applied.Status != metav1.ConditionTrue || len(w.Status.ManifestStatuses) == 0 {
		return false
	}
	if applied.ObservedGeneration != w.Generation && (applied.ObservedGeneration != 0 || !reflectsManifests(w)) {
		return false
	}
	for _, ms := range w.Status.ManifestStatuses {
		if manifestHealth(ms) != workv1alpha1.ResourceHealthy {
			return false
		}
	}
	return true
}

// reflectsManifests says whether the member copies a Work's status
// reflects are those of its manifests now, for a Work whose Applied
// condition records no generation: Karmada's karmada-agent, serving a Pull
// cluster, writes none. Its status reflection carries the template
// generation of the member copy (resourceTemplateGeneration), which the
// hub stamps on a Pull cluster's manifests (pkg/binding): every manifest
// that carries one must be reflected at it. A Work none of whose
// manifests carries one cannot tell: it is not judged current.
func reflectsManifests(w *workv1alpha1.Work) bool {
	compared := 0
	for _, m := range w.Spec.Workload.Manifests {
		obj := &unstructured.Unstructured{}
		if obj.UnmarshalJSON(m.Raw) != nil {
			return false
		}
		want, stamped := obj.GetAnnotations()[workv1alpha2.ResourceTemplateGenerationAnnotationKey]
		if !stamped {
			continue
		}
		gvk := obj.GroupVersionKind()
		reflected := false
		for _, ms := range w.Status.ManifestStatuses {
			id := ms.Identifier
			if id.Group != gvk.Group || id.Kind != gvk.Kind || id.Namespace != obj.GetNamespace() || id.Name != obj.GetName() || ms.Status == nil {
				continue
			}
			var status struct {
				ResourceTemplateGeneration *int64 `json:"resourceTemplateGeneration"`
			}
			reflected = json.Unmarshal(ms.Status.Raw, &status) == nil && status.ResourceTemplateGeneration != nil &&
				strconv.FormatInt(*status.ResourceTemplateGeneration, 10) == want
		}
		if !reflected {
			return false
		}
		compared++
	}
	return compared > 0
}

// manifestHealth is a member object's health as its Work reports it:
// Karmada's interpreter's verdict (Deployments, StatefulSets and DaemonSets
// updated and available at their generation; other kinds it has no rule
// for healthy once applied), except for Jobs. Karmada has no rule for Jobs,
// and a Job counts healthy there as soon as it is applied, however it ends;
// a rollout waits for it to complete: Healthy when its Complete condition
// is True, Unhealthy when Failed is, Unknown until then.
func manifestHealth(ms workv1alpha1.ManifestStatus) workv1alpha1.ResourceHealth {
	if ms.Identifier.Group != batchv1.GroupName || ms.Identifier.Kind != "Job" {
		return ms.Health
	}
	var status batchv1.JobStatus
	if ms.Status == nil || json.Unmarshal(ms.Status.Raw, &status) != nil {
		return workv1alpha1.ResourceUnknown
	}
	for _, c := range status.Conditions {
		switch {
		case c.Status != corev1.ConditionTrue:
		case c.Type == batchv1.JobComplete:
			return workv1alpha1.ResourceHealthy
		case c.Type == batchv1.JobFailed:
			return workv1alpha1.ResourceUnhealthy
		}
	}
	return workv1alpha1.ResourceUnknown
}

// stages resolves spec.stages against the placed clusters: by name, or by
// the labels of their Cluster objects (clusters an earlier stage took are
// not taken again); the placed clusters no stage names form the last stage,
// "remaining". It also judges each stage's gates by the clock and returns
// when the first of them changes by itself.
func (r *Reconciler) stages(ctx context.Context, ro revision.Rollout, clusters []clusterv1alpha1.Cluster,
	placed map[string]bool, now time.Time) ([]Stage, time.Duration, error) {
	taken := map[string]bool{}
	var out []Stage
	var recheck time.Duration
	every, err := stageAnalysis(ro, ro.Spec.Analysis, "spec.analysis")
	if err != nil {
		return nil, 0, err
	}
	for _, s := range ro.Spec.Stages {
		st := Stage{Name: s.Name, Pause: s.Pause, Analysis: every}
		if s.Analysis != nil {
			if st.Analysis, err = stageAnalysis(ro, s.Analysis, fmt.Sprintf("spec.stages[%s].analysis", s.Name)); err != nil {
				return nil, 0, err
			}
		}
		if s.MinSuccessTime != nil {
			st.MinSuccessTime = s.MinSuccessTime.Duration
		}
		var selector labels.Selector
		if s.ClusterSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(s.ClusterSelector)
			if err != nil {
				return nil, 0, fmt.Errorf("spec.stages[%s].clusterSelector of %s cannot be read: %v; fix it", s.Name, ro, err)
			}
			selector = sel
		}
		for _, c := range clusters {
			if !placed[c.Name] || taken[c.Name] {
				continue
			}
			if slices.Contains(s.Clusters, c.Name) || selector != nil && selector.Matches(labels.Set(c.Labels)) {
				st.Clusters = append(st.Clusters, c.Name)
				taken[c.Name] = true
			}
		}
		slices.Sort(st.Clusters)
		st.MaxConcurrency, st.ConcurrencyProblem = concurrency(s.MaxConcurrency, len(st.Clusters))
		hold, next, err := r.gateHold(ctx, r.Client, ro, s, now)
		if err != nil {
			return nil, 0, err
		}
		st.GateHold = hold
		if !next.IsZero() {
			if d := next.Sub(now); d > 0 && (recheck == 0 || d < recheck) {
				recheck = d
			}
		}
		out = append(out, st)
	}
	rest := Stage{Name: rolloutsv1alpha1.RemainingStage, Analysis: every}
	for c := range placed {
		if !taken[c] {
			rest.Clusters = append(rest.Clusters, c)
		}
	}
	if len(rest.Clusters) > 0 {
		slices.Sort(rest.Clusters)
		rest.MaxConcurrency = len(rest.Clusters)
		out = append(out, rest)
	}
	return out, recheck, nil
}

// gateHold judges the stage's gates, read through reader, by the clock at
// now: "" when all are open, else what holds, fail safe (a missing gate
// holds).
func (r *Reconciler) gateHold(ctx context.Context, reader client.Reader, ro revision.Rollout, s rolloutsv1alpha1.Stage, now time.Time) (string, time.Time, error) {
	var msgs []string
	var next time.Time
	for _, ref := range s.Gates {
		ns, name, ok := strings.Cut(ref, "/")
		if !ok {
			ns, name = ro.Obj.GetNamespace(), ref
		}
		if ns == "" {
			msgs = append(msgs, fmt.Sprintf("gate '%s' needs a namespace in a ClusterRollout: write namespace/%s", ref, ref))
			continue
		}
		g := &gatingv1alpha1.Gate{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, g)
		if apierrors.IsNotFound(err) {
			msgs = append(msgs, fmt.Sprintf("gate '%s/%s' does not exist: create it, or remove it from the stage's gates", ns, name))
			continue
		}
		if err != nil {
			return "", time.Time{}, err
		}
		e := gatestate.At(g, now)
		if e.NextChange != nil && (next.IsZero() || e.NextChange.Before(next)) {
			next = *e.NextChange
		}
		if !e.Open {
			msgs = append(msgs, fmt.Sprintf("waiting approval, gate '%s/%s' is closed (%s)", ns, name, e.Message))
		}
	}
	return strings.Join(msgs, "; "), next, nil
}

// confirmStageGates reads again, past the cache, the gates of every stage
// in which out releases a cluster the prior status had not released at
// the revision, as the binding controller confirms its holders before a
// release: a gate closed just before, while the Gate informer lagged,
// holds. It puts what they say into in and reports whether a gate the
// cache had as open is closed (the step is then taken again).
func (r *Reconciler) confirmStageGates(ctx context.Context, ro revision.Rollout, in *Input, out Output, now time.Time) (bool, error) {
	if in.Initial {
		return false, nil // the first revision is released everywhere at once
	}
	had := map[string]bool{}
	for _, c := range in.Prior.Clusters {
		if c.Revision == in.Revision && c.State != rolloutsv1alpha1.StatePending {
			had[c.Name] = true
		}
	}
	starting := map[string]bool{}
	for _, c := range out.Status.Clusters {
		if c.Revision == in.Revision && c.State != rolloutsv1alpha1.StatePending && !had[c.Name] {
			starting[c.Stage] = true
		}
	}
	changed := false
	for _, s := range ro.Spec.Stages {
		if !starting[s.Name] || len(s.Gates) == 0 {
			continue
		}
		hold, _, err := r.gateHold(ctx, r.fresh(), ro, s, now)
		if err != nil {
			return false, err
		}
		for i := range in.Stages {
			if in.Stages[i].Name == s.Name && hold != "" && in.Stages[i].GateHold == "" {
				in.Stages[i].GateHold, changed = hold, true
			}
		}
	}
	return changed, nil
}
