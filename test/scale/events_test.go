package scale

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/federator-dev/federator/test/framework"
)

// eventKey groups hub Events by the kind they are about, their reason and
// who emitted them; WorkDispatching keeps its message (held or dispatching).
type eventKey struct{ Kind, Reason, Message, Component string }

// eventCounts is how many times each kind of Event was emitted: the sum of
// the Events' counts (a POST creates an Event with count 1, each repeat of
// the same reason and message on the same object PATCHes count + 1).
type eventCounts map[eventKey]int

func (e *env) events(ctx context.Context) (eventCounts, error) {
	list := &corev1.EventList{}
	if err := e.Hub.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list hub Events: %w", err)
	}
	out := eventCounts{}
	for _, ev := range list.Items {
		k := eventKey{Kind: ev.InvolvedObject.Kind, Reason: ev.Reason, Component: ev.Source.Component}
		if ev.Reason == "WorkDispatching" {
			k.Message = ev.Message
		}
		out[k] += max(int(ev.Count), 1)
	}
	return out, nil
}

func (c eventCounts) since(earlier eventCounts) eventCounts { return framework.Delta(c, earlier) }

func (c eventCounts) String() string {
	keys := make([]eventKey, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c[keys[i]] != c[keys[j]] {
			return c[keys[i]] > c[keys[j]]
		}
		return keys[i].Reason < keys[j].Reason
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n\t\t%6d  %s %s (%s)", c[k], k.Kind, k.Reason, k.Component)
		if k.Message != "" {
			fmt.Fprintf(&b, " %q", k.Message)
		}
	}
	return b.String()
}
