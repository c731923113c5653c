// Package yamldocs owns reading multi-document YAML (or JSON) into objects,
// the form of every manifest federator embeds or a person applies.
package yamldocs

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Decode returns every non-empty document in data, in order.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// Apply server-side applies every document in data with c, in order, and
// stops at the first error, which names the object.
func Apply(ctx context.Context, c client.Client, data []byte, opts ...client.ApplyOption) error {
	objs, err := Decode(data)
	if err != nil {
		return err
	}
	for _, u := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
			return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}
