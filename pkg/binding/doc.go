// Package binding owns the step from a ResourceBinding or
// ClusterResourceBinding to one Work per target cluster, as Karmada's
// binding controller: Reconciler places the binding (pkg/placement), asks
// pkg/hold what holds each target cluster, writes one Work per target with
// that decision (spec.suspendDispatching and the hold annotations), and
// deletes the Works of clusters no longer targeted. The status that flows
// back from the Works is pkg/bindingstatus's.
package binding
