package countdown

import (
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// NewCache is a cache of the hub's tombstones, limited by their label and
// run by mgr: the hub's other ConfigMaps (templates among them) are no
// business of the controllers that watch countdowns, and are not cached
// for them.
func NewCache(mgr ctrl.Manager) (cache.Cache, error) {
	tombstones, err := cache.New(mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{workkeys.TombstoneLabel: "true"})})
	if err != nil {
		return nil, err
	}
	return tombstones, mgr.Add(tombstones)
}
