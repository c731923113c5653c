// Package bindingview owns what the binding controller (pkg/binding) and
// the binding status controller (pkg/bindingstatus) both need of a
// ResourceBinding or ClusterResourceBinding: View, one shape for either
// kind; its Works, listed by WorkBindingIndex (registered once per manager,
// IndexWorks) and mapped back to it (OfWork); and WriteOwnedStatus, how
// each writes only the status fields it owns of the binding they share.
package bindingview
