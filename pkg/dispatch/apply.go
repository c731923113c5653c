package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
)

// applyResult says what applying one manifest did.
type applyResult string

const (
	applyCreated   applyResult = "created"
	applyUpdated   applyResult = "updated"
	applyUnchanged applyResult = "unchanged"
)

// desiredHash is the hash stamped on member objects: it covers the whole
// manifest, so it changes exactly when the desired state does.
func desiredHash(manifest *unstructured.Unstructured) (string, error) {
	raw, err := json.Marshal(manifest.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8]), nil
}

// writeDecision is the pure decision for one manifest given what the member
// holds (nil when absent): write or not, and the error a person reads when
// the member object belongs to someone else (Karmada's allowUpdate).
func writeDecision(desired, existing *unstructured.Unstructured, hash, cluster string) (write bool, err error) {
	if existing == nil {
		return true, nil
	}
	managed := existing.GetLabels()[workkeys.ManagedLabel] == workkeys.ManagedLabelValue
	if !managed && desired.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation] != workv1alpha2.ResourceConflictResolutionOverwrite {
		return false, fmt.Errorf("resource(kind=%s, %s/%s) already exists in the cluster %s and the %s strategy value is empty, Karmada will not manage this resource: set spec.conflictResolution: Overwrite on the policy (or the annotation on the template) to take it over",
			desired.GetKind(), desired.GetNamespace(), desired.GetName(), cluster, workv1alpha2.ResourceConflictResolutionAnnotation)
	}
	if existing.GetAnnotations()[workkeys.AppliedHashAnnotation] != hash {
		return true, nil
	}
	// Same desired state as last applied: write only if someone changed the
	// member object away from it (drift), as Karmada's object watcher does.
	return !contains(existing.Object, desired.Object), nil
}

// contains reports whether have holds everything want sets: maps may carry
// more keys (defaults, other managers' fields), lists must match item by
// item, and a quantity may come back in the API server's spelling (see
// canonicalQuantity). What the hash cannot see — an edit made in the
// member — shows here.
func contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, found := h[k]
			if !found {
				if wv == nil {
					continue
				}
				return false
			}
			if !contains(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !contains(h[i], w[i]) {
				return false
			}
		}
		return true
	case string:
		return have == w || canonicalQuantity(have, w)
	case int64, float64, int32, int:
		if _, ok := have.(string); ok {
			return canonicalQuantity(have, fmt.Sprint(w))
		}
		return numeric(have) == numeric(want)
	default:
		return have == want
	}
}

// canonicalQuantity reports whether have is the API server's spelling of the
// quantity want: the server stores a resource.Quantity field (cpu: 0.5,
// memory: 1024Mi) and returns it canonical (500m, 1Gi), so a manifest that
// spells it otherwise would look drifted on every reconcile and be
// rewritten. Only the exact canonical string counts: a plain string field
// that happens to parse as a number ("1.10" edited to "1.1") is still drift.
func canonicalQuantity(have any, want string) bool {
	h, ok := have.(string)
	if !ok {
		return false
	}
	q, err := resource.ParseQuantity(want)
	return err == nil && q.String() == h
}

func numeric(v any) any {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int32:
		return float64(n)
	case int:
		return float64(n)
	}
	return v
}

// applyManifest makes the member hold manifest, writing only when the
// desired state differs from what was last applied. It returns the member
// object as it now is, for status collection, and whether it took back the
// object's deletion countdown: an object placed again is adopted, never
// deleted and created anew. beforeWrite, when set, is called before
// anything is written to the member; its error stops the application.
func applyManifest(ctx context.Context, member client.Client, manifest *unstructured.Unstructured, cluster string,
	beforeWrite func() error) (_ *unstructured.Unstructured, _ applyResult, adopted bool, _ error) {
	desired := manifest.DeepCopy()
	hash, err := desiredHash(desired)
	if err != nil {
		return nil, "", false, err
	}
	existing, err := getMemberObject(ctx, member, desired)
	if err != nil {
		return nil, "", false, err
	}
	// What the member owns is kept before anything is compared or written;
	// the hash above stays that of the hub's desired state.
	if desired, err = retain(desired, existing); err != nil {
		return nil, "", false, err
	}
	write, err := writeDecision(desired, existing, hash, cluster)
	if err != nil {
		return existing, applyUnchanged, false, err
	}
	if beforeWrite != nil && (write || countingDown(existing)) {
		if err := beforeWrite(); err != nil {
			return nil, "", false, err
		}
	}
	if countingDown(existing) {
		// Before the apply, while existing is the version just read: the
		// mark goes with a resourceVersion precondition, so pkg/softdelete's
		// deletion (preconditioned too) and this cannot both succeed.
		if err := countdown.TakeBack(ctx, member, existing); err != nil {
			return nil, "", false, fmt.Errorf("cluster %s: %w", cluster, err)
		}
		adopted = true
	}
	if !write {
		return existing, applyUnchanged, adopted, nil
	}
	annotations := desired.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[workkeys.AppliedHashAnnotation] = hash
	desired.SetAnnotations(annotations)
	if err := member.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired),
		client.FieldOwner(policykeys.FieldManager), client.ForceOwnership); err != nil {
		return nil, "", adopted, fmt.Errorf("apply %s %s to cluster %s: %w", desired.GetKind(), toolscache.MetaObjectToName(desired).String(), cluster, err)
	}
	if existing == nil {
		return desired, applyCreated, adopted, nil
	}
	return desired, applyUpdated, adopted, nil
}

// countingDown reports whether obj carries a deletion countdown.
func countingDown(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	_, counting := obj.GetAnnotations()[workkeys.DeletionTimestampAnnotation]
	return counting
}

// getMemberObject returns the member's copy of manifest, or nil when absent.
func getMemberObject(ctx context.Context, member client.Client, manifest *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(manifest.GroupVersionKind())
	err := member.Get(ctx, client.ObjectKeyFromObject(manifest), existing)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return existing, nil
}

func decodeManifest(m workv1alpha1.Manifest) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(m.Raw); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	return u, nil
}
