// Package bindingstatus owns the status that flows back from the Works to
// a ResourceBinding or ClusterResourceBinding, as Karmada's binding status
// controller (bindingStatus): Reconciler aggregates the binding's Works
// into its aggregatedStatus and FullyApplied condition and, for workloads
// (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs), into the hub
// template's status (TemplateStatus, by Karmada's default interpreter).
// The Works themselves, and the binding's other conditions, are pkg/binding's.
package bindingstatus
