package cli

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listedOnce is a hub client that answers each distinct read once and
// repeats the answer: Karmada's override manager reads the Cluster and
// lists every override policy for each template and cluster it renders,
// which on a large hub would be three requests per row of `get rollout`.
// One command is one snapshot of the hub, so the repeats are as current as
// the first answer.
type listedOnce struct {
	client.Client
	answers map[string]runtime.Object
}

func newListedOnce(c client.Client) *listedOnce {
	return &listedOnce{Client: c, answers: map[string]runtime.Object{}}
}

func (l *listedOnce) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return l.once(fmt.Sprintf("get %T %s", obj, key), obj, func() error { return l.Client.Get(ctx, key, obj, opts...) })
}

func (l *listedOnce) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	return l.once(fmt.Sprintf("list %T %s %v %v", list, o.Namespace, o.LabelSelector, o.FieldSelector), list,
		func() error { return l.Client.List(ctx, list, opts...) })
}

// once stores into obj the answer read, or reads it; errors are not kept.
func (l *listedOnce) once(key string, obj runtime.Object, read func() error) error {
	if answer, ok := l.answers[key]; ok {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(answer.DeepCopyObject()).Elem())
		return nil
	}
	if err := read(); err != nil {
		return err
	}
	l.answers[key] = obj.DeepCopyObject()
	return nil
}
