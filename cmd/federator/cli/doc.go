// Package cli owns federator's commands for operating a rollout from a
// terminal or as the kubectl plugin kubectl-federator: where they connect
// (--kubeconfig, $KUBECONFIG, --fleet DIR, --context, -n/-A), suspend and
// resume through the suspension annotations, get (policies, bindings,
// Works, clusters and the per-cluster rollout view), and diff (what
// resuming would change in a member).
//
// It only reads what the controllers decided and wrote: holds come from
// each Work's spec.suspendDispatching and hold annotations, never
// re-decided here. The one write it makes is an annotation on the object a
// person named (suspend, resume); diff writes nothing anywhere.
package cli
