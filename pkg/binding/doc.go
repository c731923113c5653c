// Package binding owns the step from a ResourceBinding or
// ClusterResourceBinding to one Work per target cluster: it places the
// binding (pkg/placement), writes the member manifest for each cluster with
// its suspension, deletes the Works of clusters no longer targeted, and
// aggregates the Works' status back into the binding.
package binding
