package main

import (
	"fmt"
	"strings"
	"time"
)

// Operation kinds, as the summary counts them. opPolicyClusterList
// suspends or resumes two or more members in one write, as `federator
// suspend|resume pp NAME --clusters a,b` does: one merge patch setting or
// removing a suspended.propagation.federator.dev/<cluster> annotation per
// member (opPolicyCluster writes one).
const (
	opVersion              = "change-version"
	opTemplateSuspend      = "template-suspended-annotation"
	opTemplateCluster      = "template-cluster-annotation"
	opPolicySuspend        = "policy-suspended-annotation"
	opPolicyCluster        = "policy-cluster-annotation"
	opPolicyClusterList    = "policy-cluster-list"
	opSuspendAll           = "spec.suspension.dispatching"
	opSuspendOn            = "spec.suspension.dispatchingOnClusters"
	opDeletePolicy         = "delete-policy"
	opRecreatePolicy       = "recreate-policy"
	opGateCreate           = "gate-create"
	opGateDelete           = "gate-delete"
	opGateList             = "gate-list"
	opGateUnlist           = "gate-unlist"
	opGateOpen             = "gate-open"
	opGateClose            = "gate-close"
	opDeleteTemplate       = "delete-template"
	opRecreateTemplate     = "recreate-template"
	opDeletionDelay        = "policy-deletion-delay"
	opPlacement            = "change-placement"
	opRolloutCreate        = "rollout-create"
	opRolloutPause         = "rollout-paused-annotation"
	opRolloutPromote       = "rollout-promote"
	opRolloutDelete        = "rollout-delete"
	faultKillController    = "kill-controller"
	faultKillAgent         = "kill-agent"
	faultPauseMember       = "pause-member"
	faultRestartHub        = "restart-hub"
	faultRestartEtcd       = "restart-member-etcd"
	faultLagInformers      = "lag-informers"
	faultSkewClocks        = "skew-clocks"
	opSelfTestDirectMember = "self-test-direct-member-write"
)

// Edits mid-rollout (overrides.go): opOverride applies the
// OverridePolicy over the Deployments with a new tag suffix, or deletes
// it; opRelabel puts the label it targets on a member's Cluster, or takes
// it off.
const (
	opOverride = "override-policy"
	opRelabel  = "cluster-override-label"
)

// Freezes (freeze.go): opFreeze creates a Freeze of every member, or of
// the members in Clusters; opUnfreeze deletes every Freeze, as `federator
// freeze` and `federator unfreeze` do.
const (
	opFreeze   = "freeze"
	opUnfreeze = "unfreeze"
)

// op is one user write, chosen by the seeded generator.
type op struct {
	Kind     string
	Template string
	Member   string
	// Version is the new version of an opVersion.
	Version string
	// Gate names the Gate of a gate operation.
	Gate string
	// For is the --for of a gate open or close request: the gate flips
	// back that long after (0: it does not).
	For time.Duration
	// Alias: a spec.suspension write in the suspension proposal's spelling
	// (suspendDispatching, suspendDispatchingOnClusters), which the hub
	// accepts beside Karmada's and must never prune into "no suspension".
	Alias bool
	// Delay is the policy's deletion delay an opDeletionDelay writes.
	Delay time.Duration
	// Stage is the stage an opRolloutPromote promotes.
	Stage string
	// Clusters are the members an opPolicyClusterList names (two or more,
	// in the order of the members), and Resume whether it resumes them
	// (removes their annotations) rather than suspends them.
	Clusters []string
	Resume   bool
	// Caller sends a gate open or close with skew-clocks (skew.go): the
	// CLI or the webhook on a clock Skew off ("": an annotation this
	// program writes, on the hub's clock).
	Caller string
	Skew   time.Duration
	// Suffix is the tag suffix an opOverride's OverridePolicy adds ("":
	// it deletes the OverridePolicy).
	Suffix string
}

func (o op) String() string {
	s := o.Kind
	if o.Template != "" {
		s += " " + o.Template
	}
	if o.Member != "" {
		s += " " + o.Member
	}
	if o.Kind == opFreeze && len(o.Clusters) > 0 {
		s += " --clusters " + strings.Join(o.Clusters, ",")
	}
	if o.Kind == opPolicyClusterList {
		if o.Resume {
			s += " resume"
		} else {
			s += " suspend"
		}
		s += " --clusters " + strings.Join(o.Clusters, ",")
	}
	if o.Version != "" {
		s += " " + o.Version
	}
	if o.Gate != "" {
		s += " " + o.Gate
	}
	if o.For > 0 {
		s += " --for " + o.For.String()
	}
	if o.Alias {
		s += " (proposal spelling)"
	}
	if o.Kind == opDeletionDelay {
		s += " " + o.Delay.String()
	}
	if o.Stage != "" {
		s += " --stage " + o.Stage
	}
	if o.Kind == opOverride {
		if o.Suffix == "" {
			s += " deleted"
		} else {
			s += " tag+" + o.Suffix
		}
	}
	if o.Caller != "" {
		s += fmt.Sprintf(" (by the %s, its clock %+v off)", o.Caller, o.Skew)
	}
	return s
}
