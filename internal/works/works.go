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
	"strconv"
	"time"

	"github.com/google/uuid"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	karmadautil "github.com/karmada-io/karmada/pkg/util"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// ownedAnnotations are annotations whose absence from the desired Work means
// "remove": the hold annotations come and go with the hold, the record of
// applied overrides with the override policies, an override failure with
// its cause, a rollback with the rollout's decision, the mark of a Work
// kept for a deletion countdown (countdown.KeepWork) with its object
// placed there again.
var ownedAnnotations = []string{workkeys.HoldReasonAnnotation, workkeys.HoldMessageAnnotation, workkeys.HoldGatesAnnotation,
	karmadautil.AppliedOverrides, karmadautil.AppliedClusterOverrides, workkeys.OverrideFailedAnnotation,
	workkeys.BindingGenerationAnnotation, workkeys.RolledBackAnnotation, workkeys.DeletionTimestampAnnotation}

// carriedAnnotations are written along with a change, never a change of
// their own: the template's resourceVersion (its status moving it costs no
// Work write), and what the member runs (its member applying the Work
// costs none either).
var carriedAnnotations = map[string]bool{workkeys.TemplateVersionAnnotation: true, workkeys.MemberRunsAnnotation: true}

// Result says what EnsureWork did.
type Result string

const (
	Created   Result = "created"
	Updated   Result = "updated"
	Unchanged Result = "unchanged"
	// Adopted: an existing Work of an owner that no longer exists was
	// taken over (AdoptOrphans) and written.
	Adopted Result = "adopted"
)

// EnsureWork creates desired, or updates the stored Work when what it
// carries differs. ownerLabel names the label that must match on an
// existing Work: a Work written for another owner is never taken over,
// unless AdoptOrphans finds that owner gone.
//
// An update states every field that decides what is held
// (spec.suspendDispatching, spec.preserveResourcesOnDeletion, the owner
// label and every owned annotation, present or explicitly removed), never
// a difference computed against the cached Work: a cache one write behind
// can then neither leave a hold out of a write nor carry a stale one into
// it. The manifests are stated when they differ from the cached Work's: a
// merge patch drops the nulls inside a list (evanphx/json-patch, as the
// API server applies it), so restating an unchanged manifest could change
// it. A manifest the cache wrongly shows as written is written on the pass
// its Work's event brings (the binding controller watches Works). When desired carries BindingGenerationAnnotation and the Work was
// last written for a newer binding, the caller read an old binding: it
// gets a conflict error (retry.CacheBehind) and nothing is written.
//
// With Confirm, an update that would release the Work (desired not held)
// first reads the stored Work through the given reader, the API server:
// when its spec is newer than the cached one's (its generation), or it was
// written for a newer binding, the caller decided from caches behind the
// API server (a new leader whose informers are still catching up after a
// hub restart) and gets a conflict error; nothing is written. A hold is
// written without that read: holding on a stale decision is corrected by
// the next pass, releasing is not.
func EnsureWork(ctx context.Context, c client.Client, desired *workv1alpha1.Work, ownerLabel string, opts ...Option) (Result, error) {
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
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if have, want := work.Labels[ownerLabel], desired.Labels[ownerLabel]; have != want {
		return adopt(ctx, c, work, desired, ownerLabel, o.ownerGone)
	}
	if err := writtenForOlderBinding(work, desired); err != nil {
		return "", err
	}
	if UpToDate(work, desired.Spec, desired.Annotations) {
		return Unchanged, nil
	}
	if o.confirm != nil && !ptr.Deref(desired.Spec.SuspendDispatching, false) {
		if err := confirmStored(ctx, o.confirm, work, desired); err != nil {
			return "", err
		}
	}
	patch, err := fullIntent(desired, ownerLabel, !manifestsUpToDate(work.Spec, desired.Spec), "")
	if err != nil {
		return "", err
	}
	// A merge patch without a resourceVersion: the fields it states are
	// the writer's alone and it states all of them, so a status write by
	// the dispatcher since the cache read (a Work being held is reported
	// just as the next change to it is written) is no reason to be
	// refused, and nothing in it depends on what the cache held.
	return Updated, c.Patch(ctx, work, client.RawPatch(types.MergePatchType, patch))
}

// adopt takes over work, written for another owner, when ownerGone says
// that owner no longer exists: a Work its binding's deletion missed (the
// deleting controller listed the binding's Works from a cache that had not
// seen this one yet) would otherwise stand for ever between the template,
// created again, and the member. Everything is stated, the manifests too,
// on the resourceVersion read: a Work that changed since is not taken over
// on that read. A Work of an owner that exists, or of no owner, is never
// taken over.
func adopt(ctx context.Context, c client.Client, work, desired *workv1alpha1.Work, ownerLabel string, ownerGone func(context.Context, string) (bool, error)) (Result, error) {
	have, want := work.Labels[ownerLabel], desired.Labels[ownerLabel]
	refused := fmt.Errorf("work %s/%s belongs to another owner (label %s=%q, want %q)", work.Namespace, work.Name, ownerLabel, have, want)
	if ownerGone == nil || have == "" {
		return "", refused
	}
	gone, err := ownerGone(ctx, have)
	if err != nil {
		return "", fmt.Errorf("%w; whether that owner still exists: %w", refused, err)
	}
	if !gone {
		return "", refused
	}
	patch, err := fullIntent(desired, ownerLabel, true, work.ResourceVersion)
	if err != nil {
		return "", err
	}
	if err := c.Patch(ctx, work, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return "", err
	}
	return Adopted, nil
}

// Option tunes EnsureWork.
type Option func(*options)

type options struct {
	confirm   client.Reader
	ownerGone func(context.Context, string) (bool, error)
}

// AdoptOrphans has EnsureWork take over a Work written for another owner
// when gone, asked with that owner's label value, says the owner no
// longer exists (it should ask the API server, not a cache).
func AdoptOrphans(gone func(ctx context.Context, owner string) (bool, error)) Option {
	return func(o *options) { o.ownerGone = gone }
}

// Confirm has EnsureWork read the stored Work through reader before an
// update that releases it.
func Confirm(reader client.Reader) Option {
	return func(o *options) { o.confirm = reader }
}

// confirmStored returns a conflict error when the Work reader has is newer
// than cached, the Work as the caller's cache showed it.
func confirmStored(ctx context.Context, reader client.Reader, cached, desired *workv1alpha1.Work) error {
	stored := &workv1alpha1.Work{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(cached), stored); err != nil {
		if apierrors.IsNotFound(err) {
			return apierrors.NewConflict(workv1alpha1.SchemeGroupVersion.WithResource("works").GroupResource(), cached.Name,
				fmt.Errorf("work %s/%s is gone since the cache read it", cached.Namespace, cached.Name))
		}
		return err
	}
	if stored.Generation > cached.Generation {
		return apierrors.NewConflict(workv1alpha1.SchemeGroupVersion.WithResource("works").GroupResource(), cached.Name,
			fmt.Errorf("work %s/%s is at generation %d, newer than the generation %d the cache read", cached.Namespace, cached.Name,
				stored.Generation, cached.Generation))
	}
	return writtenForOlderBinding(stored, desired)
}

// writtenForOlderBinding returns a conflict error when the stored Work was
// last written from a newer binding than desired was built from.
func writtenForOlderBinding(stored, desired *workv1alpha1.Work) error {
	want, ok := desired.Annotations[workkeys.BindingGenerationAnnotation]
	if !ok {
		return nil
	}
	have, err1 := strconv.ParseInt(stored.Annotations[workkeys.BindingGenerationAnnotation], 10, 64)
	read, err2 := strconv.ParseInt(want, 10, 64)
	if err1 != nil || err2 != nil || have <= read {
		return nil
	}
	return apierrors.NewConflict(workv1alpha1.SchemeGroupVersion.WithResource("works").GroupResource(), stored.Name,
		fmt.Errorf("work %s/%s was written for binding generation %d, newer than the generation %d read from the cache",
			stored.Namespace, stored.Name, have, read))
}

// fullIntent is the merge patch that sets every field the writer of
// desired owns: owned annotations desired lacks are removed (null); the
// manifests, and ChangedAtAnnotation with them, when they changed. A
// resourceVersion other than "" makes it apply only to that version.
func fullIntent(desired *workv1alpha1.Work, ownerLabel string, manifestsChanged bool, resourceVersion string) ([]byte, error) {
	annotations := map[string]any{}
	for _, k := range ownedAnnotations {
		annotations[k] = nil
	}
	for k, v := range desired.Annotations {
		annotations[k] = v
	}
	if manifestsChanged {
		annotations[workkeys.ChangedAtAnnotation] = now()
	}
	var preserve any
	if desired.Spec.PreserveResourcesOnDeletion != nil {
		preserve = *desired.Spec.PreserveResourcesOnDeletion
	}
	spec := map[string]any{
		"suspendDispatching":          ptr.Deref(desired.Spec.SuspendDispatching, false),
		"preserveResourcesOnDeletion": preserve,
	}
	if manifestsChanged {
		manifests := desired.Spec.Workload.Manifests
		if manifests == nil {
			manifests = []workv1alpha1.Manifest{}
		}
		spec["workload"] = map[string]any{"manifests": manifests}
	}
	metadata := map[string]any{
		"labels":      map[string]any{ownerLabel: desired.Labels[ownerLabel]},
		"annotations": annotations,
	}
	if resourceVersion != "" {
		metadata["resourceVersion"] = resourceVersion
	}
	return json.Marshal(map[string]any{"metadata": metadata, "spec": spec})
}

// UpToDate reports whether work carries spec and annotations: manifests are
// compared by content (the API server may re-encode them), and an owned
// annotation the stored Work has but annotations lacks is a difference.
func UpToDate(work *workv1alpha1.Work, spec workv1alpha1.WorkSpec, annotations map[string]string) bool {
	for k, v := range annotations {
		if carriedAnnotations[k] {
			continue
		}
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
