package overrides

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListedOnce is c, except that it lists OverridePolicies and
// ClusterOverridePolicies once per namespace and selector, and answers
// the same list again from that first answer. Karmada's override manager
// lists both for every cluster it renders; a client without a cache (the
// CLI) would ask the API server twice per template and cluster. Use one
// for one pass over the templates, not longer: it does not see changes.
func ListedOnce(c client.Client) client.Client {
	return &listedOnce{Client: c, lists: map[string]client.ObjectList{}}
}

type listedOnce struct {
	client.Client
	mu    sync.Mutex
	lists map[string]client.ObjectList
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
