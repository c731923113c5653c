package retry

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCacheBehind(t *testing.T) {
	works := schema.GroupResource{Group: "work.karmada.io", Resource: "works"}
	conflict := apierrors.NewConflict(works, "web-1", errors.New("the object has been modified"))
	exists := apierrors.NewAlreadyExists(works, "web-1")
	forbidden := apierrors.NewForbidden(works, "web-1", errors.New("no"))
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"conflict", conflict, true},
		{"create of a Work the cache did not show yet", fmt.Errorf("cluster member2: %w", exists), true},
		{"conflicts on several clusters", errors.Join(fmt.Errorf("cluster member1: %w", conflict), fmt.Errorf("cluster member2: %w", exists)), true},
		{"a real failure among them", errors.Join(conflict, fmt.Errorf("cluster member3: %w", forbidden)), false},
		{"a real failure", forbidden, false},
	}
	for _, c := range cases {
		if got := CacheBehind(c.err); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
