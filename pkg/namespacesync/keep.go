package namespacesync

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"k8s.io/utils/ptr"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
)

// Keepers lists what keeps namespace ns in one member although the hub no
// longer propagates it there: the objects of the hub's in it that may not
// be removed yet, each as a person reads it ("Deployment shop/web is held
// (...)"), sorted; empty when the namespace may go. Removing a namespace
// removes everything in it, so it waits for the same rules as its objects:
//   - a Work that is held (and not being deleted: deletion is never held)
//     keeps the namespace of its objects, so a hold is not cut short;
//   - a deletion delay on an object, and a countdown recorded in a
//     tombstone, keep it until that object's countdown has ended.
//
// works are the Works of the member's execution namespace (the
// namespace's own Work among them is skipped), tombstones the countdowns
// recorded there.
func Keepers(ns string, works []workv1alpha1.Work, tombstones []countdown.Tombstone) []string {
	why := map[string]string{}
	for i := range works {
		w := &works[i]
		if w.Labels[ownerLabel] != "" {
			continue
		}
		held := ptr.Deref(w.Spec.SuspendDispatching, false) && w.DeletionTimestamp.IsZero()
		for _, m := range w.Spec.Workload.Manifests {
			var meta manifestMeta
			if json.Unmarshal(m.Raw, &meta) != nil || meta.Metadata.Namespace != ns {
				continue
			}
			object := countdown.Ref{Kind: meta.Kind, Namespace: ns, Name: meta.Metadata.Name}.String()
			if held {
				why[object] = fmt.Sprintf("%s is held (%s)", object, holdMessage(w))
				continue
			}
			delay, ok := meta.Metadata.Annotations[policykeys.DeletionDelayAnnotation]
			if !countdown.DelaysDeletion(delay, ok) {
				continue
			}
			if w.DeletionTimestamp.IsZero() {
				why[object] = fmt.Sprintf("%s has deletion delay %s, which removing the namespace would cut short", object, delay)
			} else {
				why[object] = fmt.Sprintf("%s is being removed with deletion delay %s", object, delay)
			}
		}
	}
	for _, t := range tombstones {
		if t.Namespace != ns {
			continue
		}
		if due, ok := t.DueAt(0); ok {
			why[t.Object()] = fmt.Sprintf("%s counts down until %s (deletion delay %s)", t.Object(), due.UTC().Format(time.RFC3339), t.Delay)
		} else {
			why[t.Object()] = fmt.Sprintf("%s is kept by its deletion delay %q, which cannot be honoured", t.Object(), t.Delay)
		}
	}
	out := make([]string, 0, len(why))
	for _, v := range why {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// KeptMessage says why namespace ns stays in cluster: the first of its
// keepers and how many more there are.
func KeptMessage(ns, cluster string, keepers []string) string {
	msg := fmt.Sprintf("namespace %s kept in %s: %s", ns, cluster, keepers[0])
	if len(keepers) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(keepers)-1)
	}
	return msg
}

// manifestMeta is what Keepers reads of a manifest.
type manifestMeta struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Namespace   string            `json:"namespace"`
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// holdMessage is what holds w, as its Dispatching condition says it.
func holdMessage(w *workv1alpha1.Work) string {
	if m := w.Annotations[workkeys.HoldMessageAnnotation]; m != "" {
		return m
	}
	return workkeys.MessageSuspendDispatching
}
