// Package cli owns federator's commands for operating a rollout from a
// terminal or as the kubectl plugin kubectl-federator: where they connect
// (--kubeconfig, $KUBECONFIG, --fleet DIR, --context, -n/-A), suspend and
// resume through the suspension annotations, get (policies, bindings,
// Works, clusters, the per-cluster rollout view, and the Rollout objects),
// diff (what resuming would change in a member), and rollout
// status|pause|resume|promote|plan for staged Rollouts.
//
// It only reads what the controllers decided and wrote: holds come from
// each Work's spec.suspendDispatching and hold annotations, a Rollout's
// progress from its status, never re-decided here. The one write it makes
// is an annotation on the object a person named (suspend, resume, rollout
// pause|resume|promote); diff writes nothing anywhere.
package cli
