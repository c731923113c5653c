package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/federator-dev/federator/test/framework"
)

// Check (d): nothing the hub did not place is changed. Each member gets an
// object of its own once the setup has propagated, written straight to it:
// a ConfigMap in the run's namespace that no policy selects. It must keep
// the version it was created with, and never be deleted, whatever the
// operations and faults do to the namespace's other objects.

// memberOwn names each member's own ConfigMap.
const memberOwn = "member-own"

func memberOwnObject(member string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: memberOwn},
		Data: map[string]string{"owner": member}}
}

// placeMemberOwn creates every member's own object and records it.
func (r *chaosRun) placeMemberOwn(ctx context.Context) error {
	for _, m := range r.fleet.Members {
		if err := r.members[m.Name].Create(ctx, memberOwnObject(m.Name)); err != nil {
			return fmt.Errorf("create %s's own ConfigMap %s/%s: %w", m.Name, namespace, memberOwn, err)
		}
		dyn, err := dynamic.NewForConfig(m.Config)
		if err != nil {
			return err
		}
		rec, err := startRecorder(ctx, memberOwn, m.Name, memberOwnObject(m.Name), dyn, r.members[m.Name], framework.JSONPath("{.data.owner}"))
		if err != nil {
			return err
		}
		r.foreign = append(r.foreign, rec)
	}
	return nil
}

// foreignChanges says, for a person, every change a recorder saw of a
// member's own object after its first version: any other resourceVersion,
// or its deletion.
func foreignChanges(rec *memberRecorder, began time.Time) []string {
	var out []string
	created := ""
	for _, seg := range rec.allSegments() {
		for _, v := range seg.Versions() {
			rv := v.Object.GetResourceVersion()
			if created == "" {
				created = rv
				continue
			}
			at := fmt.Sprintf("t+%.3fs", v.Observed.Sub(began).Seconds())
			switch {
			case v.Event == watch.Deleted:
				out = append(out, fmt.Sprintf("VIOLATION: %s's own ConfigMap %s/%s, which the hub never placed, was deleted (seen at %s)",
					rec.member, namespace, memberOwn, at))
			case rv != created:
				out = append(out, fmt.Sprintf("VIOLATION: %s's own ConfigMap %s/%s, which the hub never placed, was changed (resourceVersion %s, "+
					"seen at %s; field managers: %s)", rec.member, namespace, memberOwn, rv, at, strings.Join(writers(v.Object), "; ")))
			}
		}
	}
	return out
}
