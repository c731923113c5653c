package overrides

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListedOnce is c, except that it reads what overrides depend on once: it
// lists OverridePolicies and ClusterOverridePolicies once per namespace
// and selector, gets each Cluster (whose labels override rules select on)
// once, and answers the same read again from that first answer.
//
// Two reasons. Karmada's override manager lists both kinds for every
// cluster it renders; a client without a cache (the CLI) would ask the API
// server twice per template and cluster. And one pass must render each
// cluster from one set of inputs: the binding controller decides whether
// a Rollout took in what a cluster gets from one render and builds the
// Work's manifest from another; an OverridePolicy edit or a Cluster
// relabel landing between them would send content the Rollout never took
// in. Use one for one pass, not longer: it does not see changes.
func ListedOnce(c client.Client) client.Client {
	return &listedOnce{Client: c, lists: map[string]client.ObjectList{}, gets: map[string]keptGet{}}
}

type listedOnce struct {
	client.Client
	mu    sync.Mutex
	lists map[string]client.ObjectList
	gets  map[string]keptGet
}

func (l *listedOnce) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*clusterv1alpha1.Cluster); !ok {
		return l.Client.Get(ctx, key, obj, opts...)
	}
	k := fmt.Sprintf("%T %s", obj, key)
	l.mu.Lock()
	defer l.mu.Unlock()
	if kept, ok := l.gets[k]; ok {
		if kept.err != nil {
			return kept.err
		}
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(kept.obj.DeepCopyObject()).Elem())
		return nil
	}
	err := l.Client.Get(ctx, key, obj, opts...)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	// A Cluster not found is an answer too: the pass renders without it
	// throughout.
	l.gets[k] = keptGet{obj: obj.DeepCopyObject().(client.Object), err: err}
	return err
}

// keptGet is the first answer to a Get: the object, or NotFound.
type keptGet struct {
	obj client.Object
	err error
}

func (l *listedOnce) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	switch list.(type) {
	case *policyv1alpha1.OverridePolicyList, *policyv1alpha1.ClusterOverridePolicyList:
	default:
		return l.Client.List(ctx, list, opts...)
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	key := fmt.Sprintf("%T %s %v %v", list, o.Namespace, o.LabelSelector, o.FieldSelector)
	l.mu.Lock()
	defer l.mu.Unlock()
	if kept, ok := l.lists[key]; ok {
		reflect.ValueOf(list).Elem().Set(reflect.ValueOf(kept.DeepCopyObject()).Elem())
		return nil
	}
	if err := l.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	l.lists[key] = list.DeepCopyObject().(client.ObjectList)
	return nil
}
