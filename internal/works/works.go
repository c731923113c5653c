// Package works owns writing a Work on the hub: create it, or update it only
// when what it carries changed, never taking over a Work another owner
// wrote. Every controller that produces Works (bindings, namespace sync)
// writes them through EnsureWork, so "is this Work up to date" is decided
// once.
package works

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	karmadautil "github.com/karmada-io/karmada/pkg/util"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// ownedAnnotations are annotations whose absence from the desired Work means
// "remove": the hold annotations come and go with the hold, the record of
// applied overrides with the override policies, an override failure with
// its cause.
var ownedAnnotations = []string{workkeys.HoldReasonAnnotation, workkeys.HoldMessageAnnotation,
	karmadautil.AppliedOverrides, karmadautil.AppliedClusterOverrides, workkeys.OverrideFailedAnnotation}

// Result says what EnsureWork did.
type Result string

const (
	Created   Result = "created"
	Updated   Result = "updated"
	Unchanged Result = "unchanged"
)

// EnsureWork creates desired, or updates the stored Work when what it
// carries differs. ownerLabel names the label that must match on an
// existing Work: a Work written for another owner is never taken over.
func EnsureWork(ctx context.Context, c client.Client, desired *workv1alpha1.Work, ownerLabel string) (Result, error) {
	work := &workv1alpha1.Work{}
	err := c.Get(ctx, client.ObjectKeyFromObject(desired), work)
	if apierrors.IsNotFound(err) {
		desired = desired.DeepCopy()
		metav1.SetMetaDataLabel(&desired.ObjectMeta, workv1alpha2.WorkPermanentIDLabel, uuid.NewString())
		metav1.SetMetaDataAnnotation(&desired.ObjectMeta, workkeys.ChangedAtAnnotation, now())
		return Created, c.Create(ctx, desired)
	}
	if err != nil {
		return "", err
	}
	if !work.DeletionTimestamp.IsZero() {
		return "", fmt.Errorf("work %s/%s is being deleted", work.Namespace, work.Name)
	}
	if want := desired.Labels[ownerLabel]; work.Labels[ownerLabel] != want {
		return "", fmt.Errorf("work %s/%s belongs to another owner (label %s=%q, want %q)", work.Namespace, work.Name,
			ownerLabel, work.Labels[ownerLabel], want)
	}
	if UpToDate(work, desired.Spec, desired.Annotations) {
		return Unchanged, nil
	}
	before := work.DeepCopy()
	for _, k := range ownedAnnotations {
		if _, ok := desired.Annotations[k]; !ok {
			delete(work.Annotations, k)
		}
	}
	for k, v := range desired.Annotations {
		metav1.SetMetaDataAnnotation(&work.ObjectMeta, k, v)
	}
	if !manifestsUpToDate(work.Spec, desired.Spec) {
		metav1.SetMetaDataAnnotation(&work.ObjectMeta, workkeys.ChangedAtAnnotation, now())
	}
	work.Spec = desired.Spec
	// A merge patch of what changed, without a resourceVersion: the spec
	// and these annotations are the writer's alone, so a status write by
	// the dispatcher since the cache read (a Work being held is reported
	// just as the next change to it is written) is no reason to be
	// refused, and the hub decodes the change, not the whole manifest
	// again.
	return Updated, c.Patch(ctx, work, client.MergeFrom(before))
}

// UpToDate reports whether work carries spec and annotations: manifests are
// compared by content (the API server may re-encode them), and an owned
// annotation the stored Work has but annotations lacks is a difference.
func UpToDate(work *workv1alpha1.Work, spec workv1alpha1.WorkSpec, annotations map[string]string) bool {
	for k, v := range annotations {
		if have, ok := work.Annotations[k]; !ok || have != v {
			return false
		}
	}
	for _, k := range ownedAnnotations {
		if _, stored := work.Annotations[k]; stored {
			if _, wanted := annotations[k]; !wanted {
				return false
			}
		}
	}
	return ptr.Deref(work.Spec.SuspendDispatching, false) == ptr.Deref(spec.SuspendDispatching, false) &&
		ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false) == ptr.Deref(spec.PreserveResourcesOnDeletion, false) &&
		manifestsUpToDate(work.Spec, spec)
}

// now is the time stamped in ChangedAtAnnotation.
func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// manifestsUpToDate compares manifests by content.
func manifestsUpToDate(have, spec workv1alpha1.WorkSpec) bool {
	if len(have.Workload.Manifests) != len(spec.Workload.Manifests) {
		return false
	}
	for i := range spec.Workload.Manifests {
		// Both sides are JSON with sorted keys, so the steady state is an
		// exact byte match; decoding is the fallback for a re-encoding.
		if bytes.Equal(have.Workload.Manifests[i].Raw, spec.Workload.Manifests[i].Raw) {
			continue
		}
		var stored, want any
		if json.Unmarshal(have.Workload.Manifests[i].Raw, &stored) != nil ||
			json.Unmarshal(spec.Workload.Manifests[i].Raw, &want) != nil ||
			!equality.Semantic.DeepEqual(stored, want) {
			return false
		}
	}
	return true
}

// FirstManifest is the first object a Work carries (federator's Works carry
// one), nil when it carries none or it does not decode.
func FirstManifest(w *workv1alpha1.Work) *unstructured.Unstructured {
	if len(w.Spec.Workload.Manifests) == 0 {
		return nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
		return nil
	}
	return u
}
