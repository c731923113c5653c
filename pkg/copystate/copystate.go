// Package copystate says what state one template's copy is in on one
// cluster, from the Work that carries it: Applied, Held, Failed, Pending or
// Deleting, with the reason and a message a person can act on. It is pure:
// `federator get rollout` and the dashboard read the hub their own ways and
// both judge a copy here, so they never disagree.
package copystate

import (
	"encoding/json"
	"fmt"
	"slices"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// The states of a copy (names fixed in docs/guides/incident-freeze.md,
// get rollout -o json).
const (
	// Applied: the member runs the template's current generation.
	Applied = "Applied"
	// Held: something holds the cluster's copy; the message says what
	// and what releases it.
	Held = "Held"
	// Failed: the member refused the Work; the message is its error.
	Failed = "Failed"
	// Pending: not applied yet (no Work yet, the Work not yet at the
	// template's generation, or the member not yet done).
	Pending = "Pending"
	// Deleting: the copy is being removed from the member.
	Deleting = "Deleting"
)

// State is one template's copy on one cluster.
type State struct {
	Cluster string
	// State is Applied, Held, Failed, Pending or Deleting.
	State string
	// Generation is the template generation the member runs; set when
	// Applied.
	Generation int64
	// Images are the container images the member runs; set when Applied.
	Images []string
	// ReadyReplicas and DesiredReplicas come from the status collected
	// from the member, for workloads.
	ReadyReplicas   *int64
	DesiredReplicas *int64
	// Reason is the hold reason when Held (SuspendDispatching, ...), else
	// the Work's Applied condition reason.
	Reason string
	// Message says, for a person, what holds it and what releases it, the
	// member's error, or what it waits for.
	Message string
	// HasWork says whether a Work carries the copy.
	HasWork bool
	// Running is what the member runs while its copy is Held, Pending or
	// Failed: the Work's own manifest when the member runs it (a held
	// member whose dispatcher found the manifests applied: Applied is for
	// this generation), else what the Work's MemberRunsAnnotation
	// recorded; nil when not known (no copy there yet, or none recorded).
	Running *Version
	// Wants is what the Work carries and the member does not run yet,
	// while the copy is Held, Pending or Failed; nil when the member runs
	// the Work's manifest, so nothing waits to reach it but later changes.
	Wants *Version
}

// Version is what a copy runs or carries: the container images of a
// workload and the binding generation its manifest was written from. It is
// also MemberRunsAnnotation's value, as JSON.
type Version struct {
	Images            []string `json:"images,omitempty"`
	BindingGeneration string   `json:"bindingGeneration,omitempty"`
}

// Text is the version as a person reads it: the first image of a workload,
// else the binding generation ("binding gen 6"); "" when neither is known.
func (v Version) Text() string {
	if len(v.Images) > 0 {
		return v.Images[0]
	}
	if v.BindingGeneration != "" {
		return "binding gen " + v.BindingGeneration
	}
	return ""
}

// Waiting is, as a person reads them, what the member runs and what it
// waits for while the copy waits: "" for what is not known, and wants ""
// when nothing waits. When both run the same images (the change is
// elsewhere in the manifest) they are told apart by binding generation.
func (s State) Waiting() (runs, wants string) {
	if s.Wants == nil {
		return "", ""
	}
	wants = s.Wants.Text()
	if s.Running == nil {
		return "", wants
	}
	runs = s.Running.Text()
	if runs == wants && s.Running.BindingGeneration != "" && s.Wants.BindingGeneration != "" {
		runs, wants = Version{BindingGeneration: s.Running.BindingGeneration}.Text(), Version{BindingGeneration: s.Wants.BindingGeneration}.Text()
	}
	return runs, wants
}

// VersionOf is what work carries.
func VersionOf(work *workv1alpha1.Work) Version {
	return Version{Images: Images(workkeys.FirstManifest(work)), BindingGeneration: work.Annotations[workkeys.BindingGenerationAnnotation]}
}

// MemberRuns is the MemberRunsAnnotation value to stamp on a write that
// replaces what work carries: what work carries, when its member runs it
// (Applied True at the Work's generation); ok is false when the member
// may run something else, and the Work should keep the value it has.
func MemberRuns(work *workv1alpha1.Work) (value string, ok bool) {
	if !runsWork(work) {
		return "", false
	}
	raw, err := json.Marshal(VersionOf(work))
	if err != nil {
		return "", false
	}
	return string(raw), true
}

// runsWork says whether work's member runs the manifest work carries now.
func runsWork(work *workv1alpha1.Work) bool {
	applied := meta.FindStatusCondition(work.Status.Conditions, workkeys.ConditionApplied)
	return applied != nil && applied.Status == metav1.ConditionTrue && applied.ObservedGeneration == work.Generation
}

// recordedRuns is what work's MemberRunsAnnotation says its member runs;
// nil when it says nothing readable.
func recordedRuns(work *workv1alpha1.Work) *Version {
	raw, ok := work.Annotations[workkeys.MemberRunsAnnotation]
	if !ok {
		return nil
	}
	v := &Version{}
	if json.Unmarshal([]byte(raw), v) != nil || v.Text() == "" {
		return nil
	}
	return v
}

// Of is the state of one cluster's copy from its Work (nil when there is
// none yet). current says whether the Work carries the template's latest
// generation; deleting, whether the template or its binding is going away.
func Of(cluster string, work *workv1alpha1.Work, current, deleting bool, templateGeneration int64) State {
	r := State{Cluster: cluster}
	if work == nil {
		if deleting {
			r.State, r.Message = Deleting, "removed from "+cluster
			return r
		}
		r.State, r.Message = Pending, "no Work for "+cluster+" yet"
		return r
	}
	r.HasWork = true
	manifest := workkeys.FirstManifest(work)
	ready, desired := Replicas(work, manifest)
	r.ReadyReplicas, r.DesiredReplicas = ready, desired
	applied := meta.FindStatusCondition(work.Status.Conditions, workkeys.ConditionApplied)
	dispatching := meta.FindStatusCondition(work.Status.Conditions, workkeys.ConditionDispatching)
	switch {
	case deleting || !work.DeletionTimestamp.IsZero():
		r.State, r.Message = Deleting, "being removed from "+cluster
	case ptr.Deref(work.Spec.SuspendDispatching, false) &&
		(dispatching == nil || dispatching.Status != metav1.ConditionFalse || dispatching.ObservedGeneration != work.Generation):
		// Held on the hub, but the dispatcher has not yet said so for
		// this spec: it may still be applying the one before.
		r.State = Pending
		r.Message = fmt.Sprintf("waiting for %s's dispatcher to hold generation %d of the Work", cluster, work.Generation)
	case ptr.Deref(work.Spec.SuspendDispatching, false):
		r.State = Held
		r.Reason = work.Annotations[workkeys.HoldReasonAnnotation]
		r.Message = work.Annotations[workkeys.HoldMessageAnnotation]
		if r.Reason == "" {
			r.Reason = workkeys.ReasonSuspendDispatching
		}
		if r.Message == "" {
			r.Message = workkeys.MessageSuspendDispatching
		}
	case dispatching != nil && dispatching.Status == metav1.ConditionFalse && dispatching.Reason == gatingv1alpha1.ReasonFrozen &&
		dispatching.ObservedGeneration == work.Generation:
		// A Freeze kept this spec from the member: its dispatcher refused
		// the write, and says which freeze and why.
		r.State, r.Reason, r.Message = Held, gatingv1alpha1.ReasonFrozen, dispatching.Message
	case work.Annotations[workkeys.OverrideFailedAnnotation] != "":
		// The member keeps the Work's last good manifest; what the
		// template now asks for cannot reach it until the policy is fixed.
		r.State, r.Reason = Failed, workkeys.ReasonApplyOverridePolicyFailed
		r.Message = work.Annotations[workkeys.OverrideFailedAnnotation]
	case applied != nil && applied.Status == metav1.ConditionFalse:
		r.State, r.Reason, r.Message = Failed, applied.Reason, applied.Message
	case work.Annotations[workkeys.RolledBackAnnotation] != "" &&
		(applied == nil || applied.Status != metav1.ConditionTrue || applied.ObservedGeneration != work.Generation):
		r.State, r.Reason = Pending, rolloutsv1alpha1.ReasonRolledBack
		r.Message = fmt.Sprintf("rolled back to %s: waiting for %s to apply it", work.Annotations[workkeys.RolledBackAnnotation], cluster)
	case work.Annotations[workkeys.RolledBackAnnotation] != "":
		// Not the template's latest on purpose: the Rollout put the
		// cluster back on the last content that was healthy there.
		r.State, r.Reason = Applied, rolloutsv1alpha1.ReasonRolledBack
		r.Message = fmt.Sprintf("rolled back to %s, the last content healthy on %s; the template's latest reaches it "+
			"when the rollout releases a fixed version", work.Annotations[workkeys.RolledBackAnnotation], cluster)
		r.Images = Images(manifest)
	case !current:
		r.State = Pending
		r.Message = fmt.Sprintf("the hub has not yet written generation %d into the Work", templateGeneration)
	case applied == nil || applied.ObservedGeneration != work.Generation:
		r.State, r.Message = Pending, "waiting for "+cluster+" to apply the Work"
	default:
		r.State, r.Reason = Applied, applied.Reason
		r.Generation = templateGeneration
		r.Images = Images(manifest)
		if want, ok := SpecReplicas(manifest); ok {
			r.DesiredReplicas = &want
		}
	}
	if r.State == Held || r.State == Pending || r.State == Failed {
		// Say what the member still runs beside what it waits for.
		if v := VersionOf(work); runsWork(work) {
			r.Running = &v
		} else {
			r.Running, r.Wants = recordedRuns(work), &v
		}
	}
	return r
}

// Replicas reads ready and desired replicas from the status the Work
// collected from its member; nil when the kind reports none. Ready counts
// the pods of the version the member's controller is rolling out, as
// `kubectl rollout status` judges a rollout: old pods still serving do not
// make a rollout stuck on a broken version look done.
func Replicas(work *workv1alpha1.Work, manifest *unstructured.Unstructured) (ready, desired *int64) {
	if len(work.Status.ManifestStatuses) == 0 || work.Status.ManifestStatuses[0].Status == nil {
		return nil, nil
	}
	var status map[string]any
	if json.Unmarshal(work.Status.ManifestStatuses[0].Status.Raw, &status) != nil {
		return nil, nil
	}
	number := func(keys ...string) *int64 {
		for _, k := range keys {
			if v, ok := status[k].(float64); ok {
				return ptr.To(int64(v))
			}
		}
		return nil
	}
	desired = number("replicas", "desiredNumberScheduled")
	if desired == nil {
		if want, ok := SpecReplicas(manifest); ok {
			desired = &want
		}
	}
	if desired == nil {
		return nil, nil
	}
	ready = number("readyReplicas", "numberReady")
	if ready == nil {
		ready = ptr.To[int64](0) // omitted when zero
	}
	if manifest != nil {
		if fields, ok := rollingKinds[manifest.GroupVersionKind().GroupKind()]; ok {
			count := func(key string) int64 { return ptr.Deref(number(key), 0) }
			ready = ptr.To(updatedReady(count("generation"), count("observedGeneration"),
				*ready, count(fields.pods), count(fields.updated)))
		}
	}
	return ready, desired
}

// rollingFields name the status fields of a kind that rolls its pods from
// one version to the next: all its pods, and those of the new version.
type rollingFields struct{ pods, updated string }

var rollingKinds = map[schema.GroupKind]rollingFields{
	{Group: "apps", Kind: "Deployment"}:  {pods: "replicas", updated: "updatedReplicas"},
	{Group: "apps", Kind: "StatefulSet"}: {pods: "replicas", updated: "updatedReplicas"},
	{Group: "apps", Kind: "DaemonSet"}:   {pods: "currentNumberScheduled", updated: "updatedNumberScheduled"},
}

// updatedReady is how many pods of the new version are ready, from a
// workload's counts: none while its controller has not observed its spec
// (the counts are the previous version's), and otherwise the ready pods
// beyond the old ones, counting every old pod as ready — the old version
// serves while a rollout is stuck, so the new one gets no credit for it.
func updatedReady(generation, observedGeneration, ready, pods, updated int64) int64 {
	if observedGeneration < generation {
		return 0
	}
	return min(updated, max(0, ready-(pods-updated)))
}

// SpecReplicas is a manifest's spec.replicas, if it has one.
func SpecReplicas(manifest *unstructured.Unstructured) (int64, bool) {
	if manifest == nil {
		return 0, false
	}
	v, found, err := unstructured.NestedInt64(manifest.Object, "spec", "replicas")
	return v, found && err == nil
}

// podSpecPaths are where workloads keep their pod's containers.
var podSpecPaths = [][]string{
	{"spec", "template", "spec"},                        // Deployment, StatefulSet, DaemonSet, ReplicaSet, Job
	{"spec", "jobTemplate", "spec", "template", "spec"}, // CronJob
	{"spec"}, // Pod
}

// Images are the container images a manifest runs, in order; nil for a
// manifest that runs no containers (not a workload).
func Images(manifest *unstructured.Unstructured) []string {
	if manifest == nil {
		return nil
	}
	for _, path := range podSpecPaths {
		containers, found, _ := unstructured.NestedSlice(manifest.Object, append(slices.Clone(path), "containers")...)
		if !found {
			continue
		}
		var out []string
		for _, c := range containers {
			if image, _ := c.(map[string]any)["image"].(string); image != "" {
				out = append(out, image)
			}
		}
		return out
	}
	return nil
}
