// Package softdelete owns ending deletion countdowns. When the hub would
// delete an object from a member and the object carries a deletion delay
// (federator.dev/deletion-delay), the dispatcher marks the member object
// with federator.dev/deletion-timestamp, records the countdown in a
// tombstone on the hub (a ConfigMap in karmada-es-<cluster>, see
// internal/countdown) and lets the Work go. This controller reconciles
// tombstones: it comes back exactly when a delay ends, deletes the member
// object then (only the same object, still marked with the same start),
// deletes at once when `federator delete --now` asks, and drops the
// tombstone of an object placed there again or already gone. Everything
// it decides from is stored (the tombstone and the member object), so a
// restart loses no countdown. What ends a countdown when is
// internal/countdown's Decide: this package acts on it.
package softdelete
