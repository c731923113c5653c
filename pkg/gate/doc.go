// Package gate owns Gates (gating.federator.dev/v1alpha1): deciding whether
// a gate is open at an instant (Evaluate: default, open and close requests,
// recurring schedules), the controller that keeps each Gate's status current
// and re-evaluates it exactly when its state can change, and the webhook
// receiver that opens and closes gates on authenticated calls.
//
// What a closed gate holds is not decided here: pkg/hold reads the gates'
// Opened condition like any other holder.
package gate

// Time zones come from the Go time zone database embedded in the binary, so
// schedules work on machines without one.
import _ "time/tzdata"
