package retry

import (
	"context"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Behind reports whether have, the resourceVersion of an object as a cache
// holds it, is older than floor, a version of the same object recorded
// elsewhere (on a binding, on a Work): the cache has not yet seen what a
// writer before it saw. An etcd-backed API server's versions are integers
// and comparable (Kubernetes' comparable resource versions, KEP-5504);
// two that are not integers and differ count as behind, so the caller reads
// the object afresh rather than guess. An empty floor is never ahead.
func Behind(have, floor string) bool {
	if floor == "" || have == floor {
		return false
	}
	h, err1 := strconv.ParseUint(have, 10, 64)
	f, err2 := strconv.ParseUint(floor, 10, 64)
	if err1 != nil || err2 != nil {
		return true
	}
	return h < f
}

// ReadAtLeast reads obj through cache and, when the cache holds a version
// Behind any of floors, once more through api, the API server itself: a
// controller that has just started (a new leader, a hub API server back)
// may have one informer caught up and another still behind, and must not
// act on an object older than one already acted on. It reports whether it
// read through api.
func ReadAtLeast(ctx context.Context, cache, api client.Reader, key client.ObjectKey, obj client.Object, floors ...string) (bool, error) {
	if err := cache.Get(ctx, key, obj); err != nil {
		return false, err
	}
	for _, floor := range floors {
		if Behind(obj.GetResourceVersion(), floor) {
			return true, api.Get(ctx, key, obj)
		}
	}
	return false, nil
}
