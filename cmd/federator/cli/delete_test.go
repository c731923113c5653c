package cli

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/countdown"
)

func TestDeleteNow(t *testing.T) {
	tomb := countdown.Tombstone{Cluster: "member3", APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web",
		UID: "u-1", StartedAt: testNow.Add(-time.Minute), Delay: "24h"}

	t.Run("asks for the deletion now on the countdown's tombstone", func(t *testing.T) {
		h := newTestHub(t, tomb.ConfigMap())
		stdout, _, err := run(t, h, "delete", "--now", "deploy", "web", "--cluster", "member3", "--wait", "0")
		if err != nil {
			t.Fatal(err)
		}
		if want := "Deployment demo/web in member3: deletion now requested"; !strings.Contains(stdout, want) {
			t.Errorf("stdout %q lacks %q", stdout, want)
		}
		cm := &corev1.ConfigMap{}
		if err := h.client.Get(t.Context(), client.ObjectKeyFromObject(tomb.ConfigMap()), cm); err != nil {
			t.Fatal(err)
		}
		if got := cm.Annotations["softdelete.federator.dev/delete-now"]; got != testNow.UTC().Format(time.RFC3339) {
			t.Errorf("delete-now = %q", got)
		}
	})

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"without --now it refuses", []string{"delete", "deploy", "web", "--cluster", "member3"}, "add --now"},
		{"without --cluster it refuses", []string{"delete", "--now", "deploy", "web"}, "--cluster is required"},
		{"an object that does not count down is left alone", []string{"delete", "--now", "deploy", "api", "--cluster", "member3"},
			"Deployment demo/api has no deletion countdown in cluster member3"},
		{"another cluster's countdown is not this one", []string{"delete", "--now", "deploy", "web", "--cluster", "member1"},
			"has no deletion countdown in cluster member1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newTestHub(t, tomb.ConfigMap())
			_, _, err := run(t, h, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to say %q", err, c.want)
			}
			cm := &corev1.ConfigMap{}
			_ = h.client.Get(t.Context(), client.ObjectKeyFromObject(tomb.ConfigMap()), cm)
			if _, asked := cm.Annotations["softdelete.federator.dev/delete-now"]; asked {
				t.Error("bad input asked for a deletion")
			}
		})
	}
}
