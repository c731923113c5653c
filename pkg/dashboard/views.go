package dashboard

import (
	"slices"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/pkg/gatestate"
	"github.com/federator-dev/federator/pkg/membership"
)

// The sections beside the grid: Gates, Rollouts, deletions and clusters,
// each as the snapshot's instant sees it.

// gateView is a Gate at the snapshot's instant.
type gateView struct {
	Namespace, Name string
	Open            bool
	Reason, Message string
	Until, Next     *time.Time
	Default         string
	Problems        []string
	Schedules       []gatingv1alpha1.GateSchedule
}

func (s *snapshot) gateViews() []gateView {
	var out []gateView
	for i := range s.gates {
		g := &s.gates[i]
		e := gatestate.At(g, s.now)
		out = append(out, gateView{Namespace: g.Namespace, Name: g.Name, Open: e.Open, Reason: e.Reason, Message: e.Message,
			Until: e.Until, Next: e.NextChange, Default: g.Spec.Default, Problems: e.Problems, Schedules: g.Spec.Schedules})
	}
	return out
}

// rolloutView is a Rollout's stages and where it is.
type rolloutView struct {
	Kind, Namespace, Name string
	Policy                string
	Revision              int64
	CurrentStage          string
	Completed             bool // the revision reached every stage: no current stage
	Stages                []stageView
	SoakLeft              string
	Failures              int
	MaxFailures           string         // as written: per stage
	Stage                 *stageFailures // the current stage's failures, nil when there is none
	OnFailure             string
	Paused                *metav1.Time
	Clusters              []rolloutsv1alpha1.ClusterStatus
	Analysed              bool // a cluster has an analysis: the table shows its verdicts
	Conditions            []metav1.Condition
}

// stageFailures is how many of a stage's clusters failed, and how many
// maxFailures allows there.
type stageFailures struct {
	Name                  string
	Clusters, Failed, Max int
}

type stageView struct {
	Name     string
	Clusters string
	Current  bool
	Done     bool
	Pause    bool
	Gates    []string
	Soak     string
	// Analysis is what judges the stage's clusters besides their health:
	// the success condition on the Prometheus query; "" when nothing does.
	Analysis string
}

func (s *snapshot) rolloutViews() []rolloutView {
	var out []rolloutView
	for _, r := range s.rollouts {
		v := rolloutView{Kind: r.kind, Namespace: r.namespace, Name: r.name, Policy: r.spec.PolicyRef.Name,
			Revision: r.status.Revision, CurrentStage: r.status.CurrentStage, OnFailure: r.spec.OnFailure,
			Paused: r.status.PausedAt, Clusters: r.status.Clusters, Conditions: r.status.Conditions,
			Completed: meta.IsStatusConditionTrue(r.status.Conditions, rolloutsv1alpha1.ConditionCompleted)}
		if v.OnFailure == "" {
			v.OnFailure = rolloutsv1alpha1.OnFailureHold
		}
		v.MaxFailures = "0"
		if r.spec.MaxFailures != nil {
			v.MaxFailures = r.spec.MaxFailures.String()
		}
		// maxFailures applies to each stage, scaled against its clusters,
		// as the rollout controller judges it (pkg/rollout).
		if current := r.status.CurrentStage; current != "" {
			v.Stage = &stageFailures{Name: current}
		}
		for _, c := range r.status.Clusters {
			v.Analysed = v.Analysed || c.Analysis != nil
			failed := c.State == rolloutsv1alpha1.StateFailed || c.State == rolloutsv1alpha1.StateRolledBack
			if failed {
				v.Failures++
			}
			if v.Stage != nil && c.Stage == v.Stage.Name {
				v.Stage.Clusters++
				if failed {
					v.Stage.Failed++
				}
			}
		}
		if v.Stage != nil {
			v.Stage.Max, _ = rolloutsv1alpha1.ResolveCount(r.spec.MaxFailures, v.Stage.Clusters, false)
		}
		reached := false
		current := r.status.CurrentStage
		stages := r.spec.Stages
		if !slices.ContainsFunc(stages, func(st rolloutsv1alpha1.Stage) bool { return st.Name == rolloutsv1alpha1.RemainingStage }) {
			stages = append(slices.Clone(stages), rolloutsv1alpha1.Stage{Name: rolloutsv1alpha1.RemainingStage})
		}
		for _, st := range stages {
			sv := stageView{Name: st.Name, Pause: st.Pause, Gates: st.Gates, Current: st.Name == current}
			if a := r.spec.AnalysisOf(st); a != nil {
				sv.Analysis = analysisText(a)
			}
			switch {
			case len(st.Clusters) > 0:
				sv.Clusters = strings.Join(st.Clusters, ", ")
			case st.ClusterSelector != nil:
				sv.Clusters = metav1.FormatLabelSelector(st.ClusterSelector)
			case st.Name == rolloutsv1alpha1.RemainingStage:
				sv.Clusters = "every other cluster"
			}
			if st.MinSuccessTime != nil {
				sv.Soak = st.MinSuccessTime.Duration.String()
				if sv.Current && r.status.SoakStartedAt != nil {
					left := r.status.SoakStartedAt.Add(st.MinSuccessTime.Duration).Sub(s.now).Truncate(time.Second)
					if left < 0 {
						left = 0
					}
					v.SoakLeft = left.String()
				}
			}
			if sv.Current {
				reached = true
			}
			sv.Done = current != "" && !reached
			v.Stages = append(v.Stages, sv)
		}
		out = append(out, v)
	}
	return out
}

// analysisText is an analysis in a few words: its conditions on its
// query's result.
func analysisText(a *rolloutsv1alpha1.Analysis) string {
	var conds []string
	if a.SuccessCondition != "" {
		conds = append(conds, "success when "+a.SuccessCondition)
	}
	if a.FailureCondition != "" {
		conds = append(conds, "failure when "+a.FailureCondition)
	}
	return strings.Join(conds, ", ") + " on Prometheus " + a.Provider.Prometheus.Address
}

// deletionView is a running deletion countdown, or a Work being removed.
type deletionView struct {
	Cluster, Object, Binding, Policy string
	Started                          time.Time
	Delay                            string
	Due                              *time.Time
	DeleteNow                        bool
}

func (s *snapshot) deletionViews(maxDelay time.Duration) []deletionView {
	var out []deletionView
	for _, t := range s.tombstones {
		v := deletionView{Cluster: t.Cluster, Object: t.Object(), Started: t.StartedAt, Delay: t.Delay, DeleteNow: !t.DeleteNow.IsZero()}
		if t.Binding.Kind != "" {
			v.Binding = t.Binding.String()
		}
		if t.Policy.Kind != "" {
			v.Policy = t.Policy.String()
		}
		if due, ok := t.DueAt(maxDelay); ok {
			v.Due = &due
		}
		out = append(out, v)
	}
	return out
}

// removing are the Works on their way out, with the deletion delay their
// manifest carries.
type removingView struct {
	Cluster, Work, Object, Delay string
	Since                        time.Time
}

func (s *snapshot) removing() []removingView {
	var out []removingView
	for _, w := range s.works {
		if w.DeletionTimestamp.IsZero() {
			continue
		}
		cluster, _ := names.GetClusterName(w.Namespace)
		v := removingView{Cluster: cluster, Work: w.Namespace + "/" + w.Name, Since: w.DeletionTimestamp.Time}
		if m := workkeys.FirstManifest(w); m != nil {
			v.Object = countdown.Ref{Kind: m.GetKind(), Namespace: m.GetNamespace(), Name: m.GetName()}.String()
			v.Delay = m.GetAnnotations()[policykeys.DeletionDelayAnnotation]
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b removingView) int { return strings.Compare(a.Work, b.Work) })
	return out
}

// clusterView is a Cluster's health and what it serves.
type clusterView struct {
	Name, Version string
	// Mode is Push (the hub writes to it) or Pull (its agent does).
	Mode            string
	Ready           string
	Reason, Message string
	Since           *metav1.Time
	APIs            int
	APIList         []string
	Labels          string
	Registered      bool
}

func (s *snapshot) clusterViews() []clusterView {
	var out []clusterView
	for _, c := range s.clusters {
		v := clusterView{Name: c.Name, Version: c.Status.KubernetesVersion, Ready: "Unknown", Registered: true,
			Labels: labels.Set(c.Labels).String(), Mode: membership.Mode(&c)}
		if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
			v.Ready, v.Reason, v.Message, v.Since = string(cond.Status), cond.Reason, cond.Message, cond.LastTransitionTime.DeepCopy()
		}
		for _, e := range c.Status.APIEnablements {
			v.APIs += len(e.Resources)
			for _, r := range e.Resources {
				v.APIList = append(v.APIList, r.Kind+" ("+e.GroupVersion+")")
			}
		}
		out = append(out, v)
	}
	return out
}
