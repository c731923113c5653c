// Package redecide owns deciding again before dispatching: when a replica
// begins to lead, and after a break in the hub caches' watches, the Works
// on the hub may be behind their templates and holds, and the dispatchers
// apply nothing of them until the controllers have decided again.
//
// The first pass of a new leader (FirstPass): the binding controller has
// decided every binding once since this replica began to lead. The
// dispatcher applies nothing before it: the Works a previous leader left
// (or that no leader updated while none led) may be behind their template
// and its holds.
//
// The round after a break in the hub caches' watches, and when a replica
// begins to lead (Round): the proof that the hub's decisions have caught
// up. While an informer cannot watch (the hub's API server restarts, a
// connection drops), writes reach its cache only when it watches again,
// and each controller then acts on them in turn: the detector writes a
// policy's new suspension into the binding, the binding controller writes
// the hold into the Work. A Work dispatched before both have would carry a
// release the hub no longer wants. A Round says when they have: after a
// break it lists the bindings, asks the detector to decide each binding's
// template again and, once it has, the binding controller to decide the
// binding again from a version at least as new as the one the detector
// left. Until a binding is decided so (or the round's patience ends),
// Current refuses its Works, and the dispatchers apply nothing of them.
package redecide
