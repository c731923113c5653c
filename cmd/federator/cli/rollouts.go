package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/overrides"
	"github.com/federator-dev/federator/internal/revision"
)

// remainingStage is the name of the implicit last stage.
const remainingStage = rolloutsv1alpha1.RemainingStage

// Exit codes of `rollout status` besides 0 (completed) and 1 (failed, or
// any error before the status could be read).
const (
	// exitNotFinished: the wait ended (--timeout, Ctrl-C) before the
	// rollout completed or failed; distinct from 1 so a script can tell
	// "it failed" from "it is still going".
	exitNotFinished = 2
)

// rolloutKind is Rollout or ClusterRollout.
type rolloutKind struct {
	kind       string
	resource   string
	namespaced bool
	// policyKind is the kind spec.policyRef names.
	policyKind string
}

var (
	namespacedRollout = rolloutKind{kind: "Rollout", resource: "rollouts.rollouts.federator.dev", namespaced: true,
		policyKind: kindPropagationPolicy}
	clusterScopedRollout = rolloutKind{kind: "ClusterRollout", resource: "clusterrollouts.rollouts.federator.dev",
		policyKind: kindClusterPropagationPolicy}
)

func (k rolloutKind) newObject() client.Object {
	if k.namespaced {
		return &rolloutsv1alpha1.Rollout{}
	}
	return &rolloutsv1alpha1.ClusterRollout{}
}

// parseRolloutArg reads NAME as `kubectl rollout status` reads
// deployment/web: "web" and "rollout/web" are a Rollout in the namespace,
// "clusterrollout/web" a ClusterRollout.
func parseRolloutArg(arg string) (rolloutKind, string, error) {
	prefix, name, found := strings.Cut(arg, "/")
	if !found {
		prefix, name = "rollout", arg
	}
	if name == "" || strings.Contains(name, "/") {
		return rolloutKind{}, "", fmt.Errorf("%q: name a Rollout as NAME or rollout/NAME, a ClusterRollout as clusterrollout/NAME", arg)
	}
	switch strings.ToLower(prefix) {
	case "rollout", "rollouts", "rollouts.rollouts.federator.dev":
		return namespacedRollout, name, nil
	case "clusterrollout", "clusterrollouts", "clusterrollouts.rollouts.federator.dev":
		return clusterScopedRollout, name, nil
	}
	return rolloutKind{}, "", fmt.Errorf("%q: %s is not a kind of rollout; name a Rollout as NAME or rollout/NAME, a ClusterRollout as clusterrollout/NAME",
		arg, prefix)
}

// rolloutObject is a Rollout or ClusterRollout as read from the hub.
type rolloutObject struct {
	kind   rolloutKind
	obj    client.Object
	spec   *rolloutsv1alpha1.RolloutSpec
	status *rolloutsv1alpha1.RolloutStatus
	// behind: a template's content changed and the controller has not
	// taken it in yet, so the status is about the content before.
	behind bool
}

func asRolloutObject(k rolloutKind, obj client.Object) *rolloutObject {
	switch o := obj.(type) {
	case *rolloutsv1alpha1.Rollout:
		return &rolloutObject{kind: k, obj: o, spec: &o.Spec, status: &o.Status}
	case *rolloutsv1alpha1.ClusterRollout:
		return &rolloutObject{kind: k, obj: o, spec: &o.Spec, status: &o.Status}
	}
	panic(fmt.Sprintf("not a rollout: %T", obj))
}

func (r *rolloutObject) ref() ref {
	return ref{kind: r.kind.kind, namespace: r.obj.GetNamespace(), name: r.obj.GetName(), resource: r.kind.resource}
}

// arg is how a person names it again on the command line.
func (r *rolloutObject) arg() string {
	if r.kind.namespaced {
		return r.obj.GetName()
	}
	return "clusterrollout/" + r.obj.GetName()
}

// observed reports whether the status is the controller's answer to the
// current spec; until it is, nothing in it is trusted.
func (r *rolloutObject) observed() bool {
	return r.status.ObservedGeneration == r.obj.GetGeneration() && !r.behind
}

func (r *rolloutObject) condition(t string) *metav1.Condition {
	return meta.FindStatusCondition(r.status.Conditions, t)
}

func (r *rolloutObject) conditionTrue(t string) bool {
	c := r.condition(t)
	return c != nil && c.Status == metav1.ConditionTrue
}

// getRollout reads the rollout arg names.
func getRollout(ctx context.Context, h *hub, arg string) (*rolloutObject, error) {
	k, name, err := parseRolloutArg(arg)
	if err != nil {
		return nil, err
	}
	r, err := readRollout(ctx, h, k, name)
	return r, explainRollout(h, k, name, err)
}

// readRollout reads a rollout; its error is the hub's, unexplained.
func readRollout(ctx context.Context, h *hub, k rolloutKind, name string) (*rolloutObject, error) {
	namespace := ""
	if k.namespaced {
		namespace = h.namespace
	}
	obj := k.newObject()
	if err := h.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		return nil, err
	}
	r := asRolloutObject(k, obj)
	// A template changed a moment ago is not in the status yet: until the
	// controller takes it in, the status is about the content before, and
	// "completed" would be an answer to the wrong question.
	ro := revision.Rollout{Obj: r.obj, Spec: r.spec, Status: r.status, Kind: k.kind}
	claimed, err := revision.ClaimedBy(ctx, h.client, overrides.Karmada(overrides.ListedOnce(h.client)), k.policyKind, namespace, r.spec.PolicyRef.Name)
	if err != nil {
		return nil, err
	}
	if r.behind, err = revision.Behind(ctx, h.client, ro, claimed); err != nil {
		return nil, err
	}
	return r, nil
}

func explainRollout(h *hub, k rolloutKind, name string, err error) error {
	if err == nil {
		return nil
	}
	r := ref{kind: k.kind, name: name, resource: k.resource}
	if k.namespaced {
		r.namespace = h.namespace
	}
	explained := h.explain(err, "get", r)
	if k.namespaced && apierrors.IsNotFound(err) {
		return fmt.Errorf("%w; a ClusterRollout is named clusterrollout/%s", explained, name)
	}
	return explained
}

func newRolloutCommand(connect connector) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout status|pause|resume|promote|plan|abort|undo NAME",
		Short: "Follow and steer a Rollout (rollouts.federator.dev): status, pause, resume, promote, plan, abort, undo",
		Long: `Follow and steer a staged rollout. NAME is a Rollout in the namespace (-n), as
NAME or rollout/NAME, or a ClusterRollout as clusterrollout/NAME.

These commands read what the rollout controller wrote in the Rollout's status
and write annotations on it; the controller decides everything else.`,
		Example: `  federator rollout status web -n demo --timeout 30m
  federator rollout pause web -n demo -m "incident 42"
  federator rollout promote clusterrollout/platform`,
	}
	cmd.AddCommand(newRolloutStatusCommand(connect), newRolloutPauseCommand(connect), newRolloutResumeCommand(connect),
		newRolloutPromoteCommand(connect), newRolloutPlanCommand(connect), newRolloutAbortCommand(connect), newRolloutUndoCommand(connect))
	return cmd
}

// --- get rollouts, get clusterrollouts --------------------------------------

var (
	rolloutSource = source{kind: namespacedRollout.kind, resource: namespacedRollout.resource, namespaced: true,
		object: func() client.Object { return &rolloutsv1alpha1.Rollout{} },
		list:   func() client.ObjectList { return &rolloutsv1alpha1.RolloutList{} }}
	clusterRolloutSource = source{kind: clusterScopedRollout.kind, resource: clusterScopedRollout.resource,
		object: func() client.Object { return &rolloutsv1alpha1.ClusterRollout{} },
		list:   func() client.ObjectList { return &rolloutsv1alpha1.ClusterRolloutList{} }}
)

// rolloutObjectListing is `get rollouts|clusterrollouts`: the Rollout
// objects, not the per-template view of `get rollout`.
type rolloutObjectListing struct{ objects }

func asRolloutObjects(items objects, _ bool) listing { return rolloutObjectListing{items} }

func (l rolloutObjectListing) table(wide bool, h *hub) *table {
	t := &table{headers: withNamespace(h.allNamespaces, "NAMESPACE", "NAME", "REVISION", "STAGE", "HEALTHY/TOTAL", "AGE")}
	if wide {
		t.headers = append(t.headers, "POLICY")
	}
	analysed := slices.ContainsFunc(l.objects, func(obj client.Object) bool {
		return slices.ContainsFunc(asRolloutObject(namespacedRollout, obj).status.Clusters,
			func(c rolloutsv1alpha1.ClusterStatus) bool { return c.Analysis != nil })
	})
	if analysed {
		t.headers = append(t.headers, "ANALYSIS")
	}
	for _, obj := range l.objects {
		r := asRolloutObject(namespacedRollout, obj)
		healthy := 0
		for _, c := range r.status.Clusters {
			if c.State == rolloutsv1alpha1.StateHealthy {
				healthy++
			}
		}
		revision := ""
		if r.status.Revision != 0 {
			revision = fmt.Sprint(r.status.Revision)
		}
		cells := withNamespace(h.allNamespaces, obj.GetNamespace(), obj.GetName(), revision, r.status.CurrentStage,
			fmt.Sprintf("%d/%d", healthy, len(r.status.Clusters)), age(obj.GetCreationTimestamp(), h.now()))
		if wide {
			cells = append(cells, r.spec.PolicyRef.Name)
		}
		if analysed {
			var verdicts []string
			for _, c := range r.status.Clusters {
				if c.Analysis != nil {
					verdicts = append(verdicts, c.Name+" "+c.Analysis.Phase)
				}
			}
			cells = append(cells, strings.Join(verdicts, ", "))
		}
		t.add(cells...)
	}
	return t
}
