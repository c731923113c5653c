// Package gate owns Gates (gating.federator.dev/v1alpha1): the controller
// that keeps each Gate's status current and re-evaluates it exactly when its
// state can change, and the webhook receiver that opens and closes gates on
// authenticated calls. What state a gate is in at an instant (default, open
// and close requests, recurring schedules) is decided by pkg/gatestate, which
// the binding controller evaluates too, with its own clock, where it holds.
//
// What a closed gate holds is not decided here: pkg/hold's GateClosed check
// does, from the verdict the binding controller gathers.
package gate
