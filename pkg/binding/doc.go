// Package binding owns the step from a ResourceBinding or
// ClusterResourceBinding to one Work per target cluster, and the status that
// flows back. Two reconcilers, as Karmada's binding controller and its
// binding status controller:
//
//   - Reconciler places the binding (pkg/placement), asks pkg/hold what
//     holds each target cluster, writes one Work per target with that
//     decision (spec.suspendDispatching and the hold annotations), and
//     deletes the Works of clusters no longer targeted;
//   - StatusReconciler aggregates the Works' status into the binding and,
//     for Deployments, into the hub template's status.
package binding
