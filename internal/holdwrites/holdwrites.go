// Package holdwrites owns the order in which federator's writes reach the hub
// API server: a write that changes what holds a cluster (a Work held or
// released, a binding's suspension) goes in the hold lane, ahead of bulk
// writes (templates propagating, status reports, Events).
//
// Why: the hub API server serves a few requests at a time; every other
// request in flight waits in its queue, or in the one HTTP/2 connection to
// it, first come first served. With 32 workers per controller and parallel
// Work writes, about 160 requests were in flight during bulk propagation,
// and a freeze's writes waited behind all of them: a queue the controllers'
// priority queues (internal/holdqueue) cannot reorder. Bulk writes are
// therefore limited to a few in flight at once (enough to keep the hub
// busy), so the waiting happens in the priority queues, where a hold goes
// first, and hold writes are never limited.
package holdwrites

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

type holdKey struct{}

// Hold marks ctx's writes as hold writes: they skip the bulk limit.
func Hold(ctx context.Context) context.Context {
	return context.WithValue(ctx, holdKey{}, true)
}

// IsHold says whether ctx's writes are hold writes.
func IsHold(ctx context.Context) bool {
	v, _ := ctx.Value(holdKey{}).(bool)
	return v
}

type turnKey struct{}

// ErrGaveWay is the error of a bulk write that stopped waiting for its
// turn because its reconcile was told to give way (Turn): nothing was
// sent.
var ErrGaveWay = errors.New("gave way to a hold change; nothing was written")

// Turn is a reconcile's place in line, as its queue sees it
// (internal/holdqueue): GiveWay is closed when the reconcile should stop
// waiting for bulk write slots (a hold change of its object is queued, or
// a hold change waits for its worker), and Waiting tells the queue how
// many of its writes wait for a slot now.
type Turn interface {
	GiveWay() <-chan struct{}
	Waiting(delta int)
}

// WithTurn makes ctx's bulk writes stop waiting for their turn when turn
// says to give way: what the reconcile still waits to write is stale or
// can wait, and its next pass writes it. A write that finds a free slot,
// or is already in flight, goes on. A nil turn changes nothing.
func WithTurn(ctx context.Context, turn Turn) context.Context {
	if turn == nil {
		return ctx
	}
	return context.WithValue(ctx, turnKey{}, turn)
}

// DefaultBulkWrites is how many bulk writes may be in flight to the hub
// at once: a 2-core hub API server is saturated by far fewer.
const DefaultBulkWrites = 16

// Limit wraps a transport to the hub: at most bulk writes (POST, PUT,
// PATCH, DELETE) not marked Hold are in flight at once; reads, watches,
// Lease renewals and hold writes pass freely. A write waiting for its turn gives up when its
// request's context ends. bulk <= 0 limits nothing.
func Limit(rt http.RoundTripper, bulk int) http.RoundTripper {
	if bulk <= 0 {
		return rt
	}
	return &limited{next: rt, slots: make(chan struct{}, bulk)}
}

type limited struct {
	next  http.RoundTripper
	slots chan struct{}
}

func (l *limited) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return l.next.RoundTrip(req)
	}
	// Leases too: a leader's renewal never waits behind bulk work.
	if IsHold(req.Context()) || strings.Contains(req.URL.Path, "/leases/") {
		return l.next.RoundTrip(req)
	}
	if err := l.acquire(req.Context()); err != nil {
		return nil, err
	}
	defer func() { <-l.slots }()
	return l.next.RoundTrip(req)
}

// acquire takes a bulk slot, waiting for one unless ctx ends or, while
// it waits, its reconcile's turn says to give way. A free slot is taken
// even by a reconcile told to give way: only waiting is given up, so a
// hub with slots to spare sees every write as before.
func (l *limited) acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	turn, _ := ctx.Value(turnKey{}).(Turn)
	var giveWay <-chan struct{}
	if turn != nil {
		giveWay = turn.GiveWay()
		turn.Waiting(1)
		defer turn.Waiting(-1)
	}
	select {
	case <-giveWay:
		return ErrGaveWay
	default:
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-giveWay:
		return ErrGaveWay
	}
}
