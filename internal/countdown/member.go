package countdown

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// StartedAt is when obj's countdown started; false when none runs. obj is
// a member object, or a Pull cluster's Work the hub keeps (KeepWork).
func StartedAt(obj metav1.Object) (time.Time, bool) {
	v, ok := obj.GetAnnotations()[workkeys.DeletionTimestampAnnotation]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		// Someone wrote something unreadable: the countdown starts anew
		// rather than ending at once.
		return time.Time{}, false
	}
	return t, true
}

// Start marks the member object as counting down since now, unless it
// already is (a repeat after a restart keeps the first start), and
// returns when it started. The resourceVersion precondition makes a write
// against a newer object fail rather than annotate what it did not read.
func Start(ctx context.Context, member client.Client, obj *unstructured.Unstructured, now time.Time) (time.Time, error) {
	if started, ok := StartedAt(obj); ok {
		return started, nil
	}
	// RFC 3339 keeps whole seconds: rounded up, so the deletion it sets is
	// never due before the delay has passed (at most a second after).
	started := wholeSecond(now)
	if err := patchAnnotation(ctx, member, obj, started.Format(time.RFC3339)); err != nil {
		return time.Time{}, fmt.Errorf("start the deletion countdown of %s %s: %w", obj.GetKind(), toolscache.MetaObjectToName(obj).String(), err)
	}
	return started, nil
}

// wholeSecond is now rounded up to the second: RFC 3339 keeps whole
// seconds, and a countdown recorded earlier than it started would end
// before its delay has passed.
func wholeSecond(now time.Time) time.Time {
	started := now.UTC().Truncate(time.Second)
	if started.Before(now) {
		started = started.Add(time.Second)
	}
	return started
}

// TakeBack removes the countdown mark from a member object placed there
// again. Server-side apply would not remove it: the mark is written by a
// patch, not by the dispatcher's apply, so apply does not own it.
func TakeBack(ctx context.Context, member client.Client, obj *unstructured.Unstructured) error {
	if _, ok := obj.GetAnnotations()[workkeys.DeletionTimestampAnnotation]; !ok {
		return nil
	}
	if err := patchAnnotation(ctx, member, obj, nil); err != nil {
		return fmt.Errorf("take back the deletion of %s %s: %w", obj.GetKind(), toolscache.MetaObjectToName(obj).String(), err)
	}
	return nil
}

func patchAnnotation(ctx context.Context, member client.Client, obj *unstructured.Unstructured, value any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"annotations":     map[string]any{workkeys.DeletionTimestampAnnotation: value}}})
	if err != nil {
		return err
	}
	return member.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(policykeys.FieldManager))
}

// Record stores t's tombstone; the tombstone of the same countdown (a
// repeat) is kept as it is, with the due time fixed when it started. It
// returns the tombstone in force and whether it wrote one. reader reads a
// tombstone already there (uncached: the hub's ConfigMaps are not worth a
// cache of every one for this rare case).
func Record(ctx context.Context, hub client.Client, reader client.Reader, t Tombstone) (Tombstone, bool, error) {
	cm := t.ConfigMap()
	err := hub.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		stored := &corev1.ConfigMap{}
		if err := reader.Get(ctx, client.ObjectKeyFromObject(cm), stored); err != nil {
			return t, false, err
		}
		if old, err := FromConfigMap(stored); err == nil && old.UID == t.UID && old.StartedAt.Equal(t.StartedAt) {
			return old, false, nil
		}
		// The record of an earlier countdown that was never forgotten (of
		// this object, or an earlier one of the same name): this one
		// replaces it.
		stored.Data, stored.Annotations = cm.Data, cm.Annotations
		if err := hub.Update(ctx, stored); err != nil {
			return t, false, err
		}
		cm = stored
	} else if err != nil {
		return t, false, err
	}
	t.StoredUID, t.StoredVersion = cm.UID, cm.ResourceVersion
	return t, true, nil
}

// Forget deletes the tombstone of t's countdown, which has ended: the
// ConfigMap t was read from or written as, by its UID and resourceVersion,
// never whatever now has its name. A tombstone read from a cache behind,
// or before its object was placed back and deleted again, names a
// countdown that is over; the record in its place may be the next
// countdown's, and deleting that would leave the object marked for ever
// and its namespace no longer kept. When the ConfigMap has changed since t
// was read, reader (uncached) reads it again: still t's countdown (a
// deletion now asked meanwhile), it is deleted as it now is; another's,
// it is left to that countdown, and that is no error.
func Forget(ctx context.Context, hub client.Client, reader client.Reader, t Tombstone) error {
	cm := t.ConfigMap()
	uid, version := t.StoredUID, t.StoredVersion
	const tries = 3
	for try := 0; ; try++ {
		if try > 0 || (uid == "" && version == "") {
			stored, err := stillRecords(ctx, reader, t)
			if stored == nil || err != nil {
				return err
			}
			uid, version = stored.UID, stored.ResourceVersion
		}
		pre := client.Preconditions{}
		if uid != "" {
			pre.UID = &uid
		}
		if version != "" {
			pre.ResourceVersion = &version
		}
		err := hub.Delete(ctx, cm, pre)
		if !apierrors.IsConflict(err) {
			return client.IgnoreNotFound(err)
		}
		if try == tries-1 {
			return fmt.Errorf("forget the deletion countdown of %s in %s: tombstone %s/%s changes while it is deleted; retrying: %w",
				t.Object(), t.Cluster, cm.Namespace, cm.Name, err)
		}
	}
}

// stillRecords reads t's tombstone as stored; nil when none is, or when
// the one stored records another countdown (another object of the same
// name, or the same object's next countdown) or cannot be read (a person
// deletes that one).
func stillRecords(ctx context.Context, reader client.Reader, t Tombstone) (*corev1.ConfigMap, error) {
	stored := &corev1.ConfigMap{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(t.ConfigMap()), stored); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if now, err := FromConfigMap(stored); err != nil || now.UID != t.UID || !now.StartedAt.Equal(t.StartedAt) {
		return nil, nil
	}
	return stored, nil
}

// Announce sends an event about t's countdown to its binding, or to its
// policy when the binding is gone, or, when both are gone, to the
// tombstone itself, so `kubectl get events -n karmada-es-<cluster>` still
// shows it.
func Announce(ctx context.Context, hub client.Reader, recorder record.EventRecorder, t Tombstone, eventType, reason, message string) {
	var target runtime.Object = t.ConfigMap()
	for _, ref := range []Ref{t.Binding, t.Policy} {
		if obj := newObject(ref); obj != nil &&
			hub.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj) == nil {
			target = obj
			break
		}
	}
	recorder.Event(target, eventType, reason, message)
}

// newObject is an empty typed object of r's kind (typed, so the hub's
// cache serves it from the informers the controllers already run).
func newObject(r Ref) client.Object {
	switch r.Kind {
	case "ResourceBinding":
		return &workv1alpha2.ResourceBinding{}
	case "ClusterResourceBinding":
		return &workv1alpha2.ClusterResourceBinding{}
	case "PropagationPolicy":
		return &policyv1alpha1.PropagationPolicy{}
	case "ClusterPropagationPolicy":
		return &policyv1alpha1.ClusterPropagationPolicy{}
	}
	return nil
}

// Messages of countdown events, shared so the dispatcher and
// pkg/softdelete word them alike.

// StartedMessage says when t's object will be deleted and how to keep it.
func StartedMessage(t Tombstone, due time.Time) string {
	return fmt.Sprintf("%s in %s will be deleted at %s (deletion delay %s, countdown started %s); place it there again before then to keep it, or run `%s` to delete it now",
		t.Object(), t.Cluster, due.UTC().Format(time.RFC3339), t.Delay, t.StartedAt.UTC().Format(time.RFC3339), ForceCommand(t))
}

// KeptMessage says why t's object is not deleted at all.
func KeptMessage(t Tombstone) string {
	_, err := Parse(t.Delay)
	return fmt.Sprintf("%s in %s is kept, not deleted: its deletion delay %v; place it there again, or run `%s` to delete it",
		t.Object(), t.Cluster, err, ForceCommand(t))
}

// TakenBackMessage says a countdown ended because the object is placed
// again.
func TakenBackMessage(t Tombstone) string {
	return fmt.Sprintf("%s in %s is placed there again: its deletion (countdown started %s) is cancelled",
		t.Object(), t.Cluster, t.StartedAt.UTC().Format(time.RFC3339))
}

// ForceCommand is the command that ends t's countdown now.
func ForceCommand(t Tombstone) string {
	cmd := fmt.Sprintf("federator delete --now %s %s", t.Kind, t.Name)
	if t.Namespace != "" {
		cmd += " -n " + t.Namespace
	}
	return cmd + " --cluster " + t.Cluster
}

// IsManagedBy reports whether obj in a member was written through the Work
// workNamespace/workName: only such objects are deleted or counted down
// when that Work goes.
func IsManagedBy(obj *unstructured.Unstructured, workNamespace, workName string) bool {
	a := obj.GetAnnotations()
	return obj.GetLabels()[workkeys.ManagedLabel] == workkeys.ManagedLabelValue &&
		a[workv1alpha2.WorkNameAnnotation] == workName && a[workv1alpha2.WorkNamespaceAnnotation] == workNamespace
}

// Lookup reads the tombstone of the object kind namespace/name in cluster;
// false when no countdown is recorded.
func Lookup(ctx context.Context, hub client.Reader, cluster, kind, namespace, name string) (Tombstone, bool, error) {
	cm := &corev1.ConfigMap{}
	err := hub.Get(ctx, client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(cluster), Name: TombstoneName(kind, namespace, name)}, cm)
	if apierrors.IsNotFound(err) {
		return Tombstone{}, false, nil
	}
	if err != nil {
		return Tombstone{}, false, err
	}
	t, err := FromConfigMap(cm)
	return t, err == nil, err
}
