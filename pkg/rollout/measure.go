package rollout

import (
	"context"
	"fmt"
	"slices"
	"time"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/revision"
	"github.com/federator-dev/federator/pkg/analysis"
)

// The controller's side of analysis: reading a stage's analysis from the
// spec (refusing one that cannot be used), and taking the measurements the
// machine asks for (Due) on the analysis' provider.

// DefaultAnalysisInterval is analysis.interval when unset.
const DefaultAnalysisInterval = time.Minute

// stageAnalysis reads an analysis (written at field of ro) for the stage
// machine; an error names the field and says what is wrong, and the
// rollout then releases nothing new until it is fixed.
func stageAnalysis(ro revision.Rollout, a *rolloutsv1alpha1.Analysis, field string) (*StageAnalysis, error) {
	if a == nil {
		return nil, nil
	}
	if _, err := analysis.ParseQuery(a.Provider.Prometheus.Query); err != nil {
		return nil, fmt.Errorf("%s.provider.prometheus.query of %s is not a valid template: %v; fix it (it may name {{ .Cluster }}, {{ .Namespace }}, {{ .Name }} and {{ .Revision }})",
			field, ro, err)
	}
	if _, err := analysis.CompileConditions(a.SuccessCondition, a.FailureCondition); err != nil {
		return nil, fmt.Errorf("%s of %s: %v; fix it", field, ro, err)
	}
	s := &StageAnalysis{Interval: DefaultAnalysisInterval, Query: a.Provider.Prometheus.Query, Spec: a,
		Limits: analysis.Limits{Count: 1}}
	if a.Interval != nil && a.Interval.Duration > 0 {
		s.Interval = a.Interval.Duration
	}
	if a.InitialDelay != nil {
		s.InitialDelay = a.InitialDelay.Duration
	}
	if a.Count != nil {
		s.Limits.Count = max(*a.Count, 1)
	}
	if a.FailureLimit != nil {
		s.Limits.FailureLimit = max(*a.FailureLimit, 0)
	}
	if a.InconclusiveLimit != nil {
		s.Limits.InconclusiveLimit = max(*a.InconclusiveLimit, 0)
	}
	return s, nil
}

// measure takes a measurement of each due cluster at in.Now.
func (r *Reconciler) measure(ctx context.Context, ro revision.Rollout, in Input, due []string, bindings []binding) map[string]rolloutsv1alpha1.Measurement {
	of := map[string]*StageAnalysis{}
	for _, s := range in.Stages {
		for _, c := range s.Clusters {
			of[c] = s.Analysis
		}
	}
	out := map[string]rolloutsv1alpha1.Measurement{}
	for _, name := range due {
		if of[name] == nil {
			continue
		}
		res := r.measureCluster(ctx, ro, in, name, of[name].Spec, bindings)
		out[name] = rolloutsv1alpha1.Measurement{Phase: res.Phase, Value: res.Value, Message: res.Message, FinishedAt: metav1.NewTime(in.Now)}
	}
	return out
}

// measureCluster runs the analysis' query for a cluster: once, or once per
// template placed there when the query names the template; the worst
// verdict counts.
func (r *Reconciler) measureCluster(ctx context.Context, ro revision.Rollout, in Input, cluster string, a *rolloutsv1alpha1.Analysis, bindings []binding) analysis.Result {
	prom := a.Provider.Prometheus
	q, err := analysis.ParseQuery(prom.Query)
	if err != nil {
		return analysis.Result{Phase: rolloutsv1alpha1.AnalysisError, Message: err.Error()}
	}
	conds, err := analysis.CompileConditions(a.SuccessCondition, a.FailureCondition)
	if err != nil {
		return analysis.Result{Phase: rolloutsv1alpha1.AnalysisError, Message: err.Error()}
	}
	p := analysis.Prometheus{Address: prom.Address}
	if ref := prom.TokenSecretRef; ref != nil {
		if p.Token, err = r.token(ctx, ro, ref); err != nil {
			return analysis.Result{Phase: rolloutsv1alpha1.AnalysisError, Message: err.Error()}
		}
	}
	var vars []analysis.Vars
	for _, b := range bindings {
		if slices.ContainsFunc(b.Spec.Clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == cluster }) {
			vars = append(vars, analysis.Vars{Cluster: cluster, Namespace: b.Spec.Resource.Namespace, Name: b.Spec.Resource.Name, Revision: in.Revision})
		}
	}
	if len(vars) == 0 || !q.NamesTemplate() {
		vars = []analysis.Vars{{Cluster: cluster, Revision: in.Revision}}
	}
	worst := analysis.Result{}
	seen := map[string]bool{}
	for _, v := range vars {
		query, err := q.Render(v)
		if err != nil {
			return analysis.Result{Phase: rolloutsv1alpha1.AnalysisError, Message: err.Error()}
		}
		if seen[query] {
			continue
		}
		seen[query] = true
		res := p.Measure(ctx, query, conds, in.Now)
		if worst.Phase == "" || severity(res.Phase) > severity(worst.Phase) {
			worst = res
		}
	}
	return worst
}

// severity orders measurement phases, the worst last.
func severity(phase string) int {
	return slices.Index([]string{rolloutsv1alpha1.AnalysisSuccessful, rolloutsv1alpha1.AnalysisInconclusive,
		rolloutsv1alpha1.AnalysisError, rolloutsv1alpha1.AnalysisFailed}, phase)
}

// token reads the bearer token a tokenSecretRef names, past the cache
// (the controller watches no Secrets), from the Rollout's namespace or
// federator-system for a ClusterRollout. Errors name the Secret, never its
// content.
func (r *Reconciler) token(ctx context.Context, ro revision.Rollout, ref *rolloutsv1alpha1.SecretKeyReference) (string, error) {
	ns := ro.Obj.GetNamespace()
	if ns == "" {
		ns = rolloutsv1alpha1.HistoryNamespace
	}
	s := &corev1.Secret{}
	err := r.fresh().Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, s)
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("secret %s/%s (the analysis' provider.prometheus.tokenSecretRef) does not exist: create it with the token under key %q", ns, ref.Name, ref.Key)
	case err != nil:
		return "", fmt.Errorf("secret %s/%s (the analysis' provider.prometheus.tokenSecretRef) cannot be read: %v", ns, ref.Name, err)
	}
	v, ok := s.Data[ref.Key]
	if !ok || len(v) == 0 {
		return "", fmt.Errorf("secret %s/%s (the analysis' provider.prometheus.tokenSecretRef) has no key %q: add the token under it", ns, ref.Name, ref.Key)
	}
	return string(v), nil
}
