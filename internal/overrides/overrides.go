// Package overrides owns applying OverridePolicies and ClusterOverridePolicies
// to the manifest one cluster gets, with Karmada's own override manager, and
// saying which policy and rule failed when one cannot be applied. Every
// controller that builds Works (bindings, namespace sync) and the CLI that
// renders them apply overrides through it.
package overrides

import (
	"fmt"

	"github.com/karmada-io/karmada/pkg/events"
	karmadautil "github.com/karmada-io/karmada/pkg/util"
	"github.com/karmada-io/karmada/pkg/util/overridemanager"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Func applies, to the manifest one cluster gets, the override policies
// that select it, and returns the Work annotations that record what it
// applied (Karmada's policy.karmada.io/applied-cluster-overrides and
// applied-overrides; none when nothing applied).
type Func func(m *unstructured.Unstructured, cluster string) (map[string]string, error)

// None applies nothing.
func None(*unstructured.Unstructured, string) (map[string]string, error) { return nil, nil }

// Karmada applies the OverridePolicies and ClusterOverridePolicies
// c reads with Karmada's own override manager (pkg/util/overridemanager), so
// what matches, the order (ClusterOverridePolicies first, then by implicit
// priority and name) and every overrider behave exactly as in Karmada.
//
// Karmada's manager sends an event on the template per policy, cluster and
// render, applied or not; the hub sends none (every hub write costs). A
// policy that cannot be applied is returned as an *Error naming the
// policy and the rule, which the binding reports once per transition
// (WorksSynced, SyncWorkFailed) and on the cluster's Work.
func Karmada(c client.Client) Func {
	return func(m *unstructured.Unstructured, cluster string) (map[string]string, error) {
		// Karmada's manager changes m as it goes, also when a policy
		// fails; the rule that failed is found by replaying from here.
		original := m.DeepCopy()
		failed := &overrideFailure{}
		cops, ops, err := overridemanager.New(c, failed).ApplyOverridePolicies(m, cluster)
		if err != nil {
			if failed.policy == nil {
				return nil, fmt.Errorf("apply override policies for cluster(%s): %w", cluster, err)
			}
			return nil, failingRule(c, original, cluster, failed.policy, err)
		}
		return appliedOverrides(cops, ops)
	}
}

// appliedOverrides is Karmada's RecordAppliedOverrides
// (pkg/controllers/binding/common.go): the applied items of each scope,
// sorted by policy name, as JSON.
func appliedOverrides(cops, ops *overridemanager.AppliedOverrides) (map[string]string, error) {
	annotations := map[string]string{}
	for key, applied := range map[string]*overridemanager.AppliedOverrides{
		karmadautil.AppliedClusterOverrides: cops, karmadautil.AppliedOverrides: ops} {
		if applied == nil {
			continue
		}
		raw, err := applied.MarshalJSON()
		if err != nil {
			return nil, err
		}
		if raw != nil {
			annotations[key] = string(raw)
		}
	}
	if len(annotations) == 0 {
		return nil, nil
	}
	return annotations, nil
}

// overrideFailure keeps which policy Karmada's ApplyOverridePolicyFailed
// event names, and drops every other event.
type overrideFailure struct{ policy *policyRef }

var _ record.EventRecorder = &overrideFailure{}

func (f *overrideFailure) Event(runtime.Object, string, string, string) {}

// Eventf reads the policy from the event's arguments: (name, cluster) for a
// ClusterOverridePolicy, (namespace, name, cluster) for an OverridePolicy.
func (f *overrideFailure) Eventf(_ runtime.Object, eventtype, reason, _ string, args ...any) {
	if eventtype != corev1.EventTypeWarning || reason != events.EventReasonApplyOverridePolicyFailed {
		return
	}
	switch len(args) {
	case 2:
		f.policy = &policyRef{Kind: "ClusterOverridePolicy", Name: fmt.Sprint(args[0])}
	case 3:
		f.policy = &policyRef{Kind: "OverridePolicy", Namespace: fmt.Sprint(args[0]), Name: fmt.Sprint(args[1])}
	}
}

func (f *overrideFailure) AnnotatedEventf(o runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	f.Eventf(o, eventtype, reason, messageFmt, args...)
}
