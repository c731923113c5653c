package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/leaving"
)

// removeManifest removes manifest's object from the member if the Work
// wrote it: at once, or, when the manifest carries a deletion delay, by
// starting its countdown (pkg/softdelete ends it). An object the hub does
// not manage is left alone. A delay that cannot be read starts a countdown
// that does not end by itself: bad input never deletes. In a member that
// leaves (its Cluster being deleted), what leaving.Keeps keeps stays and
// the rest is deleted at once.
func (r *WorkReconciler) removeManifest(ctx context.Context, member client.Client, manifest *unstructured.Unstructured,
	workNamespace, workName string, clusterLeaves bool) (string, error) {
	// Every write below is preconditioned on the copy as read: one changed
	// meanwhile (taken over by the member's owner, created anew) is read
	// and judged again, a few times, then left to the Work's next retry.
	const tries = 3
	for try := 1; ; try++ {
		did, err := r.removeManifestAsRead(ctx, member, manifest, workNamespace, workName, clusterLeaves)
		if !apierrors.IsConflict(err) || try == tries {
			return did, err
		}
	}
}

// removeManifestAsRead is one attempt of removeManifest, against the
// member copy as it reads it now.
func (r *WorkReconciler) removeManifestAsRead(ctx context.Context, member client.Client, manifest *unstructured.Unstructured,
	workNamespace, workName string, clusterLeaves bool) (string, error) {
	existing, err := getMemberObject(ctx, member, manifest)
	if err != nil || existing == nil || !countdown.IsManagedBy(existing, workNamespace, workName) {
		return "", err
	}
	delayed := countdown.Delayed(manifest)
	if clusterLeaves {
		if why, kept := leaving.Keeps(manifest.GetKind(), delayed); kept {
			return why, nil
		}
	}
	if !delayed {
		// Only the copy just judged the Work's, by its UID and
		// resourceVersion: never one of the same name created since, nor
		// one its owner took over since.
		uid, rv := existing.GetUID(), existing.GetResourceVersion()
		return "deleted", client.IgnoreNotFound(member.Delete(ctx, existing,
			client.Preconditions{UID: &uid, ResourceVersion: &rv}, client.PropagationPolicy("Background")))
	}
	started, err := countdown.Start(ctx, member, existing, r.now())
	if err != nil {
		return "", err
	}
	t, created, err := countdown.Record(ctx, r.Hub, r.tombstones(), countdown.NewTombstone(r.Cluster, manifest, existing, started))
	if err != nil {
		return "", fmt.Errorf("record the deletion countdown of %s on the hub: %w", t.Object(), err)
	}
	due, ok := t.DueAt(0)
	if !ok {
		if created {
			countdown.Announce(ctx, r.Hub, r.Recorder, t, corev1.EventTypeWarning, workkeys.EventReasonSoftDeletionKept, countdown.KeptMessage(t))
		}
		return "kept: invalid deletion delay " + t.Delay, nil
	}
	if created {
		countdown.Announce(ctx, r.Hub, r.Recorder, t, corev1.EventTypeNormal, workkeys.EventReasonSoftDeletionStarted, countdown.StartedMessage(t, due))
	}
	return "counting down until " + due.UTC().Format(time.RFC3339), nil
}

// takeBackHeld takes back the countdowns of a held Work's objects: an
// object placed here again is no longer to be deleted, whatever holds its
// new version back. Only the mark goes (the same object, by the
// resourceVersion it was read at); the manifest waits for the hold to lift.
func (r *WorkReconciler) takeBackHeld(ctx context.Context, member client.Client, work *workv1alpha1.Work) error {
	var errs []error
	for _, m := range work.Spec.Workload.Manifests {
		manifest, err := decodeManifest(m)
		if err != nil {
			continue // reported by apply once the Work is released
		}
		existing, err := getMemberObject(ctx, member, manifest)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if existing == nil || !countdown.IsManagedBy(existing, work.Namespace, work.Name) {
			continue
		}
		if _, counting := existing.GetAnnotations()[workkeys.DeletionTimestampAnnotation]; !counting {
			continue
		}
		if err := countdown.TakeBack(ctx, member, existing); err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", r.Cluster, err))
			continue
		}
		// Only the countdown of this object: a tombstone of an earlier one of
		// the same name is pkg/softdelete's to end (as gone).
		t, found, err := countdown.Lookup(ctx, r.tombstones(), r.Cluster, manifest.GetKind(), manifest.GetNamespace(), manifest.GetName())
		if err == nil && found && t.UID == existing.GetUID() {
			err = r.cancelled(ctx, t)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// takenBack ends the countdown recorded for manifest's object in this
// member, once the object is placed here again and its mark is removed.
func (r *WorkReconciler) takenBack(ctx context.Context, manifest *unstructured.Unstructured) error {
	t, found, err := countdown.Lookup(ctx, r.tombstones(), r.Cluster, manifest.GetKind(), manifest.GetNamespace(), manifest.GetName())
	if err != nil || !found {
		return err
	}
	return r.cancelled(ctx, t)
}

// cancelled forgets t's countdown and tells why.
func (r *WorkReconciler) cancelled(ctx context.Context, t countdown.Tombstone) error {
	if err := countdown.Forget(ctx, r.Hub, r.tombstones(), t); err != nil {
		return err
	}
	countdown.Announce(ctx, r.Hub, r.Recorder, t, corev1.EventTypeNormal, workkeys.EventReasonSoftDeletionCancelled, countdown.TakenBackMessage(t))
	return nil
}

func (r *WorkReconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// tombstones reads tombstones: uncached, as they are read only when a
// countdown starts again or is taken back.
func (r *WorkReconciler) tombstones() client.Reader {
	if r.HubReader == nil {
		return r.Hub
	}
	return r.HubReader
}
