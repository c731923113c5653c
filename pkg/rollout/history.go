package rollout

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/revision"
)

// A Rollout's revisions: the content each kept (ControllerRevisions), read
// back and pruned.

// keptTemplates are the templates revision rev kept, by binding; nil when
// it kept none (no revision yet, or its history is gone). A revision the
// cache does not have is read past it: nil starts a new revision, and a
// cache that has not seen the current one yet (after a restart, its
// informers reconnecting one by one) would start one for nothing, the
// canary soaking again and a promote given for the current revision no
// longer matching.
func (r *Reconciler) keptTemplates(ctx context.Context, ro revision.Rollout, rev int64) (map[string]*revision.Template, error) {
	if rev == 0 {
		return nil, nil
	}
	cr := &appsv1.ControllerRevision{}
	key := ro.HistoryKey(rev)
	err := r.Client.Get(ctx, key, cr)
	if apierrors.IsNotFound(err) {
		err = r.fresh().Get(ctx, key, cr)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if cr.Labels[rolloutsv1alpha1.RolloutUIDLabel] != string(ro.UID()) {
		return nil, nil
	}
	return revision.Templates(cr)
}

// DefaultRevisionHistoryLimit is spec.revisionHistoryLimit when unset.
const DefaultRevisionHistoryLimit = 10

// keep stores the content of revision rev as a ControllerRevision (its
// history namespace made when missing), owned by the Rollout when both
// share a namespace.
func (r *Reconciler) keep(ctx context.Context, ro revision.Rollout, rev int64, bindings []binding) error {
	var content revision.Content
	for _, b := range bindings {
		content.Templates = append(content.Templates, revision.NewTemplate(b.Claimed))
	}
	cr, err := revision.NewHistory(ro, rev, content)
	if err != nil {
		return err
	}
	if cr.Namespace == ro.Obj.GetNamespace() {
		cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: rolloutsv1alpha1.GroupVersion.String(), Kind: ro.Kind,
			Name: ro.Obj.GetName(), UID: ro.UID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	} else {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cr.Namespace}}
		if err := r.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s for the history of %s: %w", cr.Namespace, ro, err)
		}
	}
	err = r.Client.Create(ctx, cr)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	// Kept already: by a step whose status write was refused, by a Rollout
	// of the same name before this one, or by a step this cache has not
	// seen the status of. Its content is immutable, and must not change
	// under a revision the status may name already.
	old := &appsv1.ControllerRevision{}
	if err := r.fresh().Get(ctx, client.ObjectKeyFromObject(cr), old); err != nil {
		return err
	}
	oldContent, err := revision.Read(old)
	if err == nil && old.Labels[rolloutsv1alpha1.RolloutUIDLabel] == string(ro.UID()) && sameHashes(oldContent, content) {
		return nil
	}
	stored := r.newRollout()
	if err := r.fresh().Get(ctx, client.ObjectKeyFromObject(ro.Obj), stored.Obj); err != nil {
		return err
	}
	if stored.UID() == ro.UID() && stored.Status.Revision >= rev {
		// The stored status names this revision already: the cache is
		// behind; the next step reads what was kept.
		return apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, cr.Name,
			fmt.Errorf("%s is at revision %d already", ro, stored.Status.Revision))
	}
	// Named by no status: left by a step whose status write was refused,
	// or by a Rollout of the same name before this one. Replace it.
	if err := r.Client.Delete(ctx, old, client.Preconditions{UID: &old.UID}); client.IgnoreNotFound(err) != nil {
		return err
	}
	return r.Client.Create(ctx, cr)
}

// sameHashes says whether a and b keep the same content: the same
// templates, and the same for each cluster.
func sameHashes(a, b revision.Content) bool {
	return maps.Equal(hashesOf(a), hashesOf(b))
}

// hashesOf are c's content hashes, by binding and by binding and cluster.
func hashesOf(c revision.Content) map[string]string {
	out := make(map[string]string, len(c.Templates))
	for _, t := range c.Templates {
		out[t.Binding] = t.Hash
		for _, r := range t.Clusters {
			out[t.Binding+"@"+r.Cluster] = r.Hash
		}
	}
	return out
}

// fresh reads past the cache; the cache when no APIReader is set.
func (r *Reconciler) fresh() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// prune deletes the kept revisions beyond spec.revisionHistoryLimit.
func (r *Reconciler) prune(ctx context.Context, ro revision.Rollout, current int64) error {
	limit := int64(DefaultRevisionHistoryLimit)
	if l := ro.Spec.RevisionHistoryLimit; l != nil {
		limit = int64(*l)
	}
	list := &appsv1.ControllerRevisionList{}
	ns := ro.HistoryKey(current).Namespace
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{rolloutsv1alpha1.RolloutUIDLabel: string(ro.UID())}); err != nil {
		return err
	}
	for i := range list.Items {
		cr := &list.Items[i]
		if cr.Revision > current-limit {
			continue
		}
		if err := r.Client.Delete(ctx, cr); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
