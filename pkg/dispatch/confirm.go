package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/redecide"
)

// What a pass confirms before its first write changes a member: that the
// hub caches its Work was decided from are watching the hub, and that the
// API server's Work is the one the cache gave.

// errHubBehind: a hub cache the Work's decision rests on is not watching
// the hub (internal/hubwatch), so the Work may be behind a hold it has not
// seen: the binding controller decided it from the same caches.
var errHubBehind = errors.New("not dispatched")

// hubBehindRetry is how soon a Work held back by errHubBehind is read
// again: a cache watches again within its reflector's backoff (up to 30 s)
// and counts as current a second after.
const hubBehindRetry = time.Second

// errHoldDeciding: the hub's controllers are deciding a hold change of
// the Work's binding or template, which may withdraw the release it
// carries (holdqueue.Deciders).
var errHoldDeciding = errors.New("not dispatched")

// holdDecidingRetry is how soon a Work held back by errHoldDeciding is
// read again: the pass that decides a hold change writes it within
// milliseconds when the hub is quiet, seconds under load.
const holdDecidingRetry = 100 * time.Millisecond

// errWorkChanged: the Work the API server has is not the one the cache
// gave this pass.
var errWorkChanged = errors.New("the Work changed since the cache read it")

// confirmWork waits, before the first write of a pass changes its member,
// while the hub's controllers decide a hold change of the Work's binding
// or template (Holds). It then reads the Work from the API server, and refuses the pass (errWorkChanged) when
// the spec there is newer than the cached one this pass applies. A hold
// the binding controller has written is then never overtaken by the
// release the cache still shows: after a restart or a change of leader,
// the binding controller's first pass writes the holds it decided just as
// the dispatchers start, and a cache a few milliseconds behind would send
// the member what the hold stopped. It costs one read per pass that
// writes to a member, none for a pass that finds the member up to date.
func (r *WorkReconciler) confirmWork(ctx context.Context, work *workv1alpha1.Work) error {
	binding := bindingOf(work)
	kinds, keys := templates(work)
	if r.HubCaches != nil {
		if err := r.HubCaches.Current(binding, kinds...); err != nil {
			return fmt.Errorf("%w: %w", errHubBehind, err)
		}
	}
	if r.Holds != nil {
		if controller, key := r.Holds.Deciding(append(keys, binding)...); controller != "" {
			return fmt.Errorf("%w: the %s controller is deciding a hold change of %s, which may withdraw this release: the Work waits for it",
				errHoldDeciding, controller, key)
		}
	}
	if r.HubReader == nil {
		return nil
	}
	fresh := &workv1alpha1.Work{}
	if err := r.HubReader.Get(ctx, client.ObjectKeyFromObject(work), fresh); err != nil {
		if apierrors.IsNotFound(err) {
			return errWorkChanged
		}
		return err
	}
	if fresh.Generation != work.Generation || !fresh.DeletionTimestamp.IsZero() {
		return errWorkChanged
	}
	return nil
}

// bindingOf is the key (redecide.BindingKey) of the binding that wrote the
// Work, from the annotations Karmada's binding controller puts on it; ""
// when none did (a namespace's Work).
func bindingOf(work *workv1alpha1.Work) string {
	a := work.GetAnnotations()
	if name := a[workv1alpha2.ClusterResourceBindingAnnotationKey]; name != "" {
		return redecide.BindingKey("", name)
	}
	if name := a[workv1alpha2.ResourceBindingNameAnnotationKey]; name != "" {
		return redecide.BindingKey(a[workv1alpha2.ResourceBindingNamespaceAnnotationKey], name)
	}
	return ""
}

// templates are the Work's manifests' kinds (whose hub caches its
// decision read) and their redecide.TemplateKey (the templates the
// detector decided it from), from one read of each manifest's head.
func templates(work *workv1alpha1.Work) (kinds []schema.GroupKind, keys []string) {
	for _, m := range work.Spec.Workload.Manifests {
		var head struct {
			metav1.TypeMeta   `json:",inline"`
			metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(m.Raw, &head); err == nil {
			gk := head.GroupVersionKind().GroupKind()
			kinds = append(kinds, gk)
			keys = append(keys, redecide.TemplateKey(gk, head.Namespace, head.Name))
		}
	}
	return kinds, keys
}
