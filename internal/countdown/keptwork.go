package countdown

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// Works the hub keeps. An agent in a Pull cluster may delete a Work's
// objects from its member the moment the Work is deleted (karmada-agent
// does: it handles a Work's deletion before anything else), so a deletion
// delay cannot ride on the deleted Work there. Where the hub would delete
// such a Work, it keeps it instead: held (nothing more is applied; the
// object stays as it is), marked with the countdown's start
// (DeletionTimestampAnnotation), and its countdown recorded in a tombstone
// that names the Work. The countdown controller on the hub ends it by
// deleting the Work when due, its manifests' delay removed first, so any
// agent deletes at once; the binding controller takes it back by writing
// the Work again (the mark is one of the annotations it owns).

// KeepWork keeps work, the Work in cluster's execution namespace of an
// object the hub no longer places there, instead of deleting it, while
// its deletion delay runs; repeated, it keeps the first start. work is
// read again through reader (uncached): one already being deleted, or
// gone, is left alone. It returns what it did, for a log.
func KeepWork(ctx context.Context, hub client.Client, reader client.Reader, recorder record.EventRecorder,
	cluster string, work *workv1alpha1.Work, now time.Time) (string, error) {
	stored := &workv1alpha1.Work{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(work), stored); err != nil || !stored.DeletionTimestamp.IsZero() {
		return "", client.IgnoreNotFound(err)
	}
	if len(stored.Spec.Workload.Manifests) != 1 {
		return "", fmt.Errorf("work %s/%s carries %d manifests: the hub keeps a Work for a deletion delay only with one",
			stored.Namespace, stored.Name, len(stored.Spec.Workload.Manifests))
	}
	manifest := &unstructured.Unstructured{}
	if err := json.Unmarshal(stored.Spec.Workload.Manifests[0].Raw, &manifest.Object); err != nil {
		return "", fmt.Errorf("work %s/%s: its manifest: %w", stored.Namespace, stored.Name, err)
	}
	started, marked := StartedAt(stored)
	if !marked {
		started = wholeSecond(now)
	}
	t := KeptWorkTombstone(cluster, manifest, stored, started)
	due, honoured := t.DueAt(0)
	message := KeptMessage(t)
	if honoured {
		message = StartedMessage(t, due)
	}
	a := stored.Annotations
	if !marked || !ptr.Deref(stored.Spec.SuspendDispatching, false) || a[workkeys.HoldReasonAnnotation] != workkeys.ReasonDeletionCountdown {
		// On the Work as read: one written since (placed again) is not
		// held on that read.
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": stored.ResourceVersion, "annotations": map[string]any{
				workkeys.DeletionTimestampAnnotation: started.UTC().Format(time.RFC3339),
				workkeys.HoldReasonAnnotation:        workkeys.ReasonDeletionCountdown,
				workkeys.HoldMessageAnnotation:       message,
				workkeys.HoldGatesAnnotation:         nil,
			}},
			"spec": map[string]any{"suspendDispatching": true},
		})
		if err != nil {
			return "", err
		}
		if err := hub.Patch(ctx, stored, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return "", fmt.Errorf("keep work %s/%s for the deletion delay of %s: %w", stored.Namespace, stored.Name, t.Object(), err)
		}
	}
	t, created, err := Record(ctx, hub, reader, t)
	if err != nil {
		return "", fmt.Errorf("record the deletion countdown of %s on the hub: %w", t.Object(), err)
	}
	if !honoured {
		if created {
			Announce(ctx, hub, recorder, t, corev1.EventTypeWarning, workkeys.EventReasonSoftDeletionKept, KeptMessage(t))
		}
		return "kept: invalid deletion delay " + t.Delay, nil
	}
	if created {
		Announce(ctx, hub, recorder, t, corev1.EventTypeNormal, workkeys.EventReasonSoftDeletionStarted, message)
	}
	return "work kept: counting down until " + due.UTC().Format(time.RFC3339), nil
}

// KeptWorkTombstone is the record of the countdown of manifest's object,
// kept in cluster by work since started.
func KeptWorkTombstone(cluster string, manifest *unstructured.Unstructured, work *workv1alpha1.Work, started time.Time) Tombstone {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(manifest.GetAPIVersion())
	obj.SetKind(manifest.GetKind())
	obj.SetNamespace(manifest.GetNamespace())
	obj.SetName(manifest.GetName())
	obj.SetUID(work.UID)
	t := NewTombstone(cluster, manifest, obj, started)
	t.Work = work.Name
	return t
}

// EndKeptWork deletes work, kept for a countdown that is due: its
// manifests' deletion delay removed first, so an agent that counts down
// itself deletes at once too, and then only the Work as written (a Work
// placed again meanwhile is refused with a conflict).
func EndKeptWork(ctx context.Context, hub client.Client, work *workv1alpha1.Work) error {
	stripped := false
	for i, m := range work.Spec.Workload.Manifests {
		manifest := &unstructured.Unstructured{}
		if err := json.Unmarshal(m.Raw, &manifest.Object); err != nil {
			continue
		}
		annotations := manifest.GetAnnotations()
		if _, ok := annotations[policykeys.DeletionDelayAnnotation]; !ok {
			continue
		}
		delete(annotations, policykeys.DeletionDelayAnnotation)
		manifest.SetAnnotations(annotations)
		raw, err := json.Marshal(manifest.Object)
		if err != nil {
			return err
		}
		work.Spec.Workload.Manifests[i].Raw = raw
		stripped = true
	}
	if stripped {
		if err := hub.Update(ctx, work); err != nil {
			return err
		}
	}
	uid, version := work.UID, work.ResourceVersion
	return client.IgnoreNotFound(hub.Delete(ctx, work, client.Preconditions{UID: &uid, ResourceVersion: &version}))
}
