package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/pkg/gatestate"
)

// A freeze is checked before each write to a member, in the one place
// every write to a member goes through (Members.Client): the Work
// dispatcher's applies, take-backs and deletions, the countdowns' and the
// soft-deletion controller's. It takes effect at watch latency, whatever
// the number of Works; the Works record it afterwards.

// FreezeGuard says, before a write to a member, whether a Freeze
// (gating.federator.dev) holds it.
type FreezeGuard struct {
	// Reader lists the Freezes: the hub cache.
	Reader client.Reader
	// Watching is nil while the hub cache of Freezes has listed the hub
	// and watches it (hubwatch.Tracker.Watching); nil: not checked.
	Watching func() error
	// Clock judges a freeze's end: the hub's clock (hubclock.Clock), since
	// the end is counted from the hub's creationTimestamp; the wall clock
	// when nil.
	Clock clock.PassiveClock
}

// FreezeKind is the kind the guard's cache must watch.
var FreezeKind = gatingv1alpha1.GroupVersion.WithKind("Freeze").GroupKind()

// FrozenError is a write to a member the guard refused: a Freeze holds
// the member, or whether one does cannot be told (its cache does not
// watch the hub). Nothing was sent.
type FrozenError struct {
	Cluster string
	// Freeze is the Freeze that holds it ("" when it cannot be told).
	Freeze string
	// Ends is when that freeze ends by itself (zero: when deleted).
	Ends    time.Time
	Message string
	// left is how long until Ends, by the guard's clock when it refused.
	left time.Duration
}

func (e *FrozenError) Error() string { return e.Message }

// frozenPoll is how often a write a freeze without an end holds is tried
// again by a controller that is not queued by the Freezes' changes.
const frozenPoll = 2 * time.Second

// RetryAfter is when to try the write again: just after the freeze ends
// by itself; a second later when whether one holds cannot be told;
// frozenPoll while it lasts until deleted.
func (e *FrozenError) RetryAfter() time.Duration {
	switch {
	case e.Freeze == "":
		return hubBehindRetry
	case e.Ends.IsZero():
		return frozenPoll
	}
	return max(e.left, 0) + 100*time.Millisecond
}

// asFrozen is err's FrozenError, nil when it is none.
func asFrozen(err error) *FrozenError {
	var fe *FrozenError
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}

// Check is nil when no Freeze holds cluster now, else a FrozenError.
func (g *FreezeGuard) Check(ctx context.Context, cluster string) error {
	if g == nil {
		return nil
	}
	if g.Watching != nil {
		if err := g.Watching(); err != nil {
			return &FrozenError{Cluster: cluster,
				Message: fmt.Sprintf("not written to %s: whether a Freeze holds it cannot be told (%v); it is written once the hub cache of Freezes watches the hub", cluster, err)}
		}
	}
	list := &gatingv1alpha1.FreezeList{}
	if err := g.Reader.List(ctx, list); err != nil {
		return &FrozenError{Cluster: cluster,
			Message: fmt.Sprintf("not written to %s: the Freezes cannot be read (%v)", cluster, err)}
	}
	now := time.Now()
	if g.Clock != nil {
		now = g.Clock.Now()
	}
	f := gatestate.Frozen(list.Items, cluster, now)
	if f == nil {
		return nil
	}
	ends := gatestate.FreezeEnds(f)
	return &FrozenError{Cluster: cluster, Freeze: f.Name, Ends: ends, Message: gatestate.FreezeMessage(f, cluster), left: ends.Sub(now)}
}

// guarded is c with every write first checked by g.
func guarded(c client.WithWatch, cluster string, g *FreezeGuard) client.Client {
	check := func(ctx context.Context) error { return g.Check(ctx, cluster) }
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return first(check(ctx), func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return first(check(ctx), func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return first(check(ctx), func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return first(check(ctx), func() error { return c.Apply(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return first(check(ctx), func() error { return c.Delete(ctx, obj, opts...) })
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			return first(check(ctx), func() error { return c.DeleteAllOf(ctx, obj, opts...) })
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return first(check(ctx), func() error { return c.SubResource(sub).Create(ctx, obj, subObj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return first(check(ctx), func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return first(check(ctx), func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
	})
}

// first is refused when set, else what write returns.
func first(refused error, write func() error) error {
	if refused != nil {
		return refused
	}
	return write()
}
