package holdqueue

import "sync"

// Deciders gathers, across the hub's controllers, who is deciding a hold
// change: each controller registers what its queue is deciding (Watched's
// Deciding), by the keys the dispatcher knows a Work by (its binding's
// redecide.BindingKey, its templates' redecide.TemplateKey). A dispatcher
// asks before it writes a release to a member, and waits while one is: a
// release written before a hold and not yet at its member (the member was
// away, a new leader's dispatchers just started) is what that hold
// withdraws, and the pass that withdraws it can take seconds under load.
// The zero Deciders has none; a nil one decides nothing.
type Deciders struct {
	mu  sync.RWMutex
	all []decider
}

type decider struct {
	controller string
	deciding   func(key string) bool
}

// Register adds controller's queue, seen through deciding; nil Deciders:
// nothing.
func (d *Deciders) Register(controller string, deciding func(key string) bool) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.all = append(d.all, decider{controller, deciding})
}

// Deciding is the first registered controller deciding a hold change of
// one of keys, and that key; "" when none is.
func (d *Deciders) Deciding(keys ...string) (controller, key string) {
	if d == nil {
		return "", ""
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, c := range d.all {
		for _, k := range keys {
			if k != "" && c.deciding(k) {
				return c.controller, k
			}
		}
	}
	return "", ""
}
