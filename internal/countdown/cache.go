package countdown

import (
	"github.com/karmada-io/karmada/pkg/util/names"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// NewCache is a cache of the hub's tombstones, limited by their label and
// run by mgr: the hub's other ConfigMaps (templates among them) are no
// business of the controllers that watch countdowns, and are not cached
// for them. With a cluster, only that cluster's tombstones (in its
// execution namespace) are cached: a Pull cluster's agent may read no
// other namespace.
func NewCache(mgr ctrl.Manager, cluster string) (cache.Cache, error) {
	o := cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{workkeys.TombstoneLabel: "true"})}
	if cluster != "" {
		o.DefaultNamespaces = map[string]cache.Config{names.GenerateExecutionSpaceName(cluster): {}}
	}
	tombstones, err := cache.New(mgr.GetConfig(), o)
	if err != nil {
		return nil, err
	}
	return tombstones, mgr.Add(tombstones)
}
