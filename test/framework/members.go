package framework

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Field reads one value a test follows (an image, a verb, a label) from an
// object as a cluster stores it.
type Field func(*unstructured.Unstructured) string

// JSONPath is the Field at a kubectl JSONPath template, e.g.
// "{.rules[0].verbs[0]}"; "" where the object has nothing there.
func JSONPath(template string) Field {
	parse := func() (*jsonpath.JSONPath, error) {
		jp := jsonpath.New(template).AllowMissingKeys(true)
		return jp, jp.Parse(template)
	}
	if _, err := parse(); err != nil {
		panic(fmt.Sprintf("framework.JSONPath(%q): %v", template, err))
	}
	return func(u *unstructured.Unstructured) string {
		// A JSONPath keeps state while it runs: one per call, so recorders
		// and polls may read at once.
		jp, _ := parse()
		var out bytes.Buffer
		if err := jp.Execute(&out, u.Object); err != nil {
			// Missing keys read as nothing; so does an index past the end
			// of a list, which AllowMissingKeys does not cover.
			if strings.HasPrefix(err.Error(), "array index out of bounds") {
				return ""
			}
			return "error: " + err.Error()
		}
		return out.String()
	}
}

// Image is the first container's image of a Deployment (or any object with
// a pod template).
var Image = JSONPath("{.spec.template.spec.containers[0].image}")

// Absent is what the value reads return for an object a cluster does not
// hold.
const Absent = ""

// MemberValue reads field from obj's namespace and name (obj's kind) in
// member: Absent when the member does not hold it, "error: ..." when it
// cannot be read.
func (e *Env) MemberValue(ctx context.Context, member string, obj client.Object, field Field) string {
	c, ok := e.Members[member]
	if !ok {
		return "error: no member " + member
	}
	return value(ctx, c, obj, field)
}

// MemberValues is MemberValue for every member, by name.
func (e *Env) MemberValues(ctx context.Context, obj client.Object, field Field) map[string]string {
	out := map[string]string{}
	for m := range e.Members {
		out[m] = e.MemberValue(ctx, m, obj, field)
	}
	return out
}

// Images is each member's image of the Deployment ns/name, Absent where
// the member does not hold it.
func (e *Env) Images(ctx context.Context, ns, name string) map[string]string {
	return e.MemberValues(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, Image)
}

func value(ctx context.Context, c client.Client, obj client.Object, field Field) string {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return "error: " + err.Error()
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
		if apierrors.IsNotFound(err) {
			return Absent
		}
		return "error: " + err.Error()
	}
	return field(u)
}

// CountImage counts, per member, the Deployments of ns named in want that
// run image.
func (e *Env) CountImage(ctx context.Context, ns string, want map[string]bool, image string) (map[string]int, error) {
	out := map[string]int{}
	for m, c := range e.Members {
		list := &appsv1.DeploymentList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		out[m] = 0
		for _, d := range list.Items {
			cs := d.Spec.Template.Spec.Containers
			if want[d.Name] && len(cs) > 0 && cs[0].Image == image {
				out[m]++
			}
		}
	}
	return out, nil
}

// EveryMemberRuns holds once every member runs every Deployment of ns named
// in want at image.
func (e *Env) EveryMemberRuns(ctx context.Context, ns string, want map[string]bool, image string) error {
	counts, err := e.CountImage(ctx, ns, want, image)
	if err != nil {
		return err
	}
	for _, n := range counts {
		if n != len(want) {
			return fmt.Errorf("per member, Deployments at %s: %v; want %d each", image, counts, len(want))
		}
	}
	return nil
}
