package dashboard

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	gatingv1alpha1 "github.com/federator-dev/federator/apis/policy/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/copystate"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/works"
	"github.com/federator-dev/federator/pkg/gatestate"
)

// States the grid shows beside copystate's: what a Rollout says of a
// cluster whose copy the member has taken.
const (
	StateProgressing = "Progressing"
	StateRolledBack  = "RolledBack"
	// StateNotTargeted is a cluster the template is not placed on.
	StateNotTargeted = "-"
)

// snapshot is everything the pages show, read from the cache at once.
type snapshot struct {
	now        time.Time
	clusters   []clusterv1alpha1.Cluster
	bindings   []binding
	works      map[client.ObjectKey]*workv1alpha1.Work
	rollouts   []rollout
	gates      []gatingv1alpha1.Gate
	tombstones []countdown.Tombstone
	// tombstonesKnown is false when the dashboard has no reader of them.
	tombstonesKnown bool
}

// binding is a ResourceBinding or a ClusterResourceBinding.
type binding struct {
	obj           client.Object
	spec          *workv1alpha2.ResourceBindingSpec
	clusterScoped bool
	// workName names the template's Work in every cluster: Karmada's
	// name hashes, which costs, so it is worked out once.
	workName string
}

func (b binding) kind() string {
	if b.clusterScoped {
		return "ClusterResourceBinding"
	}
	return "ResourceBinding"
}

// id names the binding in URLs: "rb/ns/name" or "crb/name".
func (b binding) id() string {
	if b.clusterScoped {
		return "crb/" + b.obj.GetName()
	}
	return "rb/" + b.obj.GetNamespace() + "/" + b.obj.GetName()
}

func (b binding) workKey(cluster string) client.ObjectKey {
	return client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(cluster), Name: b.workName}
}

// policy is the policy that claims the template ("" kind when none), from
// the detector's annotations.
func (b binding) policy() (kind, namespace, name string) {
	return workkeys.ClaimingPolicy(b.obj.GetAnnotations())
}

// rollout is a Rollout or a ClusterRollout.
type rollout struct {
	kind, namespace, name string
	spec                  rolloutsv1alpha1.RolloutSpec
	status                rolloutsv1alpha1.RolloutStatus
}

// governs says whether the rollout governs what the policy claims.
func (r rollout) governs(policyKind, policyNamespace, policyName string) bool {
	if r.kind == "ClusterRollout" {
		return policyKind == "ClusterPropagationPolicy" && policyName == r.spec.PolicyRef.Name
	}
	return policyKind == "PropagationPolicy" && policyNamespace == r.namespace && policyName == r.spec.PolicyRef.Name
}

// What each part of the page reads.
const (
	readClusters = 1 << iota
	readBindings
	readWorks
	readRollouts
	readGates
	readTombstones
)

var partReads = map[string]int{
	fragGrid:      readClusters | readBindings | readWorks | readRollouts,
	fragDetail:    readBindings | readWorks | readRollouts,
	fragRollouts:  readRollouts,
	fragGates:     readGates,
	fragDeletions: readWorks | readTombstones,
	fragClusters:  readClusters,
}

// read lists what the parts show from the hub's cache. The dashboard
// never changes what it reads, so the cache's objects are not copied.
func read(ctx context.Context, src Source, now time.Time, parts []string) (*snapshot, error) {
	what := 0
	for _, p := range parts {
		what |= partReads[p]
	}
	s := &snapshot{now: now, works: map[client.ObjectKey]*workv1alpha1.Work{}}
	c := src.Hub
	noCopy := client.UnsafeDisableDeepCopy
	if what&readClusters != 0 {
		clusters := &clusterv1alpha1.ClusterList{}
		if err := c.List(ctx, clusters, noCopy); err != nil {
			return nil, fmt.Errorf("list Clusters: %w", err)
		}
		s.clusters = clusters.Items
		slices.SortFunc(s.clusters, func(a, b clusterv1alpha1.Cluster) int { return strings.Compare(a.Name, b.Name) })
	}
	if what&readBindings != 0 {
		rbs := &workv1alpha2.ResourceBindingList{}
		if err := c.List(ctx, rbs, noCopy); err != nil {
			return nil, fmt.Errorf("list ResourceBindings: %w", err)
		}
		for i := range rbs.Items {
			s.bindings = append(s.bindings, binding{obj: &rbs.Items[i], spec: &rbs.Items[i].Spec})
		}
		crbs := &workv1alpha2.ClusterResourceBindingList{}
		if err := c.List(ctx, crbs, noCopy); err != nil {
			return nil, fmt.Errorf("list ClusterResourceBindings: %w", err)
		}
		for i := range crbs.Items {
			s.bindings = append(s.bindings, binding{obj: &crbs.Items[i], spec: &crbs.Items[i].Spec, clusterScoped: true})
		}
		for i := range s.bindings {
			r := s.bindings[i].spec.Resource
			s.bindings[i].workName = names.GenerateWorkName(r.Kind, r.Name, r.Namespace)
		}
		slices.SortFunc(s.bindings, func(a, b binding) int {
			ra, rb := a.spec.Resource, b.spec.Resource
			return strings.Compare(ra.Namespace+"/"+ra.Kind+"/"+ra.Name, rb.Namespace+"/"+rb.Kind+"/"+rb.Name)
		})
	}
	if what&readWorks != 0 {
		workList := &workv1alpha1.WorkList{}
		if err := c.List(ctx, workList, noCopy); err != nil {
			return nil, fmt.Errorf("list Works: %w", err)
		}
		for i := range workList.Items {
			s.works[client.ObjectKeyFromObject(&workList.Items[i])] = &workList.Items[i]
		}
	}
	if what&readRollouts != 0 {
		ros := &rolloutsv1alpha1.RolloutList{}
		if err := c.List(ctx, ros, noCopy); err != nil {
			return nil, fmt.Errorf("list Rollouts: %w", err)
		}
		for _, r := range ros.Items {
			s.rollouts = append(s.rollouts, rollout{kind: "Rollout", namespace: r.Namespace, name: r.Name, spec: r.Spec, status: r.Status})
		}
		cros := &rolloutsv1alpha1.ClusterRolloutList{}
		if err := c.List(ctx, cros, noCopy); err != nil {
			return nil, fmt.Errorf("list ClusterRollouts: %w", err)
		}
		for _, r := range cros.Items {
			s.rollouts = append(s.rollouts, rollout{kind: "ClusterRollout", name: r.Name, spec: r.Spec, status: r.Status})
		}
		slices.SortFunc(s.rollouts, func(a, b rollout) int {
			return strings.Compare(a.kind+"/"+a.namespace+"/"+a.name, b.kind+"/"+b.namespace+"/"+b.name)
		})
	}
	if what&readGates != 0 {
		gates := &gatingv1alpha1.GateList{}
		if err := c.List(ctx, gates, noCopy); err != nil {
			return nil, fmt.Errorf("list Gates: %w", err)
		}
		s.gates = gates.Items
		slices.SortFunc(s.gates, func(a, b gatingv1alpha1.Gate) int {
			return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
		})
	}
	if what&readTombstones != 0 && src.Tombstones != nil {
		s.tombstonesKnown = true
		cms := &corev1.ConfigMapList{}
		if err := src.Tombstones.List(ctx, cms, noCopy, client.MatchingLabels{workkeys.TombstoneLabel: "true"}); err != nil {
			return nil, fmt.Errorf("list deletion tombstones: %w", err)
		}
		for i := range cms.Items {
			if t, err := countdown.FromConfigMap(&cms.Items[i]); err == nil {
				s.tombstones = append(s.tombstones, t)
			}
		}
		slices.SortFunc(s.tombstones, func(a, b countdown.Tombstone) int { return a.StartedAt.Compare(b.StartedAt) })
	}
	return s, nil
}

// filter selects templates on the grid.
type filter struct {
	Namespace, Kind, Label string
	selector               labels.Selector
}

func (f filter) matches(b binding, manifestLabels map[string]string) bool {
	r := b.spec.Resource
	if f.Namespace != "" && r.Namespace != f.Namespace {
		return false
	}
	if f.Kind != "" && !strings.EqualFold(r.Kind, f.Kind) {
		return false
	}
	return f.selector == nil || f.selector.Matches(labels.Set(manifestLabels))
}

// cell is one template on one cluster.
type cell struct {
	Cluster string
	State   string
	Reason  string
	Message string
	// Version is the image the Work carries for a workload, else the
	// binding generation it was written from; Applied says whether the
	// member runs it.
	Version  string
	Ready    string
	Since    *metav1.Time
	Work     *workv1alpha1.Work
	Rollout  string
	Targeted bool
	// Runs: held, but the member already runs Version.
	Runs bool
}

// VersionText is the version as the grid writes it: what the member
// runs, or, while the copy is held (and the member does not run it yet),
// pending or failed, what the Work carries and the member has not taken
// yet ("wants nginx:1.27").
func (c cell) VersionText() string {
	switch {
	case c.Version == "":
		return ""
	case c.State == copystate.Held && c.Runs:
		return c.Version
	case c.State == copystate.Held || c.State == copystate.Pending || c.State == copystate.Failed:
		return "wants " + c.Version
	}
	return c.Version
}

// Class is the CSS class of the cell's state.
func (c cell) Class() string {
	if c.State == StateNotTargeted {
		return "state-none"
	}
	return "state-" + c.State
}

// row is one template and its cells.
type row struct {
	ID                       string
	Kind, Namespace, Name    string
	BindingKind, BindingName string
	Policy                   string
	Cells                    []cell
	Deleting                 bool
	Counts                   map[string]int
}

func (s *snapshot) row(b binding, f filter, clusters []string) (row, bool) {
	res := b.spec.Resource
	var manifestLabels map[string]string
	targeted := map[string]bool{}
	for _, t := range b.spec.Clusters {
		targeted[t.Name] = true
		if w := s.works[b.workKey(t.Name)]; w != nil && manifestLabels == nil && f.selector != nil {
			if m := works.FirstManifest(w); m != nil {
				manifestLabels = m.GetLabels()
			}
		}
	}
	if !f.matches(b, manifestLabels) {
		return row{}, false
	}
	pk, pn, pname := b.policy()
	r := row{ID: b.id(), Kind: res.Kind, Namespace: res.Namespace, Name: res.Name, BindingKind: b.kind(),
		BindingName: b.obj.GetName(), Deleting: !b.obj.GetDeletionTimestamp().IsZero(), Counts: map[string]int{}}
	if pk != "" {
		r.Policy = pk + " " + strings.TrimPrefix(pn+"/"+pname, "/")
	}
	for _, cluster := range clusters {
		c := s.cell(b, cluster, targeted[cluster])
		r.Counts[c.State]++
		r.Cells = append(r.Cells, c)
	}
	return r, true
}

// cell judges one template's copy on one cluster as `federator get
// rollout` does (internal/copystate). The Work is current when it was
// written from the binding's latest generation: the detector records the
// template's resourceVersion in the binding, so a template change is a
// new binding generation.
func (s *snapshot) cell(b binding, cluster string, targeted bool) cell {
	w := s.works[b.workKey(cluster)]
	if !targeted && w == nil {
		return cell{Cluster: cluster, State: StateNotTargeted, Message: "not placed on " + cluster}
	}
	deleting := !targeted || !b.obj.GetDeletionTimestamp().IsZero()
	current := false
	if w != nil {
		written, err := strconv.ParseInt(w.Annotations[workkeys.BindingGenerationAnnotation], 10, 64)
		current = err != nil || written >= b.obj.GetGeneration()
	}
	st := copystate.Of(cluster, w, current, deleting, 0)
	c := cell{Cluster: cluster, State: st.State, Reason: st.Reason, Message: st.Message, Work: w, Targeted: targeted, Runs: st.Runs}
	if st.State == copystate.Pending && w != nil && !current {
		// The dashboard follows the binding, not the template itself.
		c.Message = fmt.Sprintf("the hub has not yet written the binding's generation %d into the Work (it carries %s)",
			b.obj.GetGeneration(), w.Annotations[workkeys.BindingGenerationAnnotation])
	}
	if st.ReadyReplicas != nil && st.DesiredReplicas != nil {
		c.Ready = fmt.Sprintf("%d/%d", *st.ReadyReplicas, *st.DesiredReplicas)
	}
	if w != nil {
		if images := copystate.Images(works.FirstManifest(w)); len(images) > 0 {
			c.Version = images[0]
		} else if g := w.Annotations[workkeys.BindingGenerationAnnotation]; g != "" {
			c.Version = "binding gen " + g
		}
		c.Since = since(w, st.State)
	}
	// A Rollout says more of a copy the member has, or waits to have.
	if pk, pn, pname := b.policy(); pk != "" && (st.State == copystate.Applied || st.State == copystate.Pending) {
		for _, ro := range s.rollouts {
			if !ro.governs(pk, pn, pname) {
				continue
			}
			for _, cs := range ro.status.Clusters {
				if cs.Name != cluster {
					continue
				}
				c.Rollout = ro.kind + " " + strings.TrimPrefix(ro.namespace+"/"+ro.name, "/")
				state := map[string]string{rolloutsv1alpha1.StateProgressing: StateProgressing,
					rolloutsv1alpha1.StateRolledBack: StateRolledBack,
					// Applied, but not healthy in time: the rollout failed there.
					rolloutsv1alpha1.StateFailed: copystate.Failed}[cs.State]
				if state != "" {
					c.State, c.Reason, c.Message, c.Since = state, cs.Reason, orElse(cs.Message, c.Message), cs.Since.DeepCopy()
				}
			}
		}
	}
	return c
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// since is when the copy's state began, as its Work's conditions say.
func since(w *workv1alpha1.Work, state string) *metav1.Time {
	condType := workkeys.ConditionApplied
	if state == copystate.Held {
		condType = workkeys.ConditionDispatching
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, condType); c != nil {
		return c.LastTransitionTime.DeepCopy()
	}
	if state == copystate.Deleting && w.DeletionTimestamp != nil {
		return w.DeletionTimestamp.DeepCopy()
	}
	return w.CreationTimestamp.DeepCopy()
}

// clusterNames are the grid's columns: every registered cluster and every
// cluster a binding targets.
func (s *snapshot) clusterNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range s.clusters {
		seen[c.Name] = true
		out = append(out, c.Name)
	}
	for _, b := range s.bindings {
		for _, t := range b.spec.Clusters {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, t.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// findBinding is the binding an id names.
func (s *snapshot) findBinding(id string) (binding, bool) {
	for _, b := range s.bindings {
		if b.id() == id {
			return b, true
		}
	}
	return binding{}, false
}

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
	Stages                []stageView
	SoakLeft              string
	Failures              int
	MaxFailures           string
	OnFailure             string
	Paused                *metav1.Time
	Clusters              []rolloutsv1alpha1.ClusterStatus
	Conditions            []metav1.Condition
}

type stageView struct {
	Name     string
	Clusters string
	Current  bool
	Done     bool
	Pause    bool
	Gates    []string
	Soak     string
}

func (s *snapshot) rolloutViews() []rolloutView {
	var out []rolloutView
	for _, r := range s.rollouts {
		v := rolloutView{Kind: r.kind, Namespace: r.namespace, Name: r.name, Policy: r.spec.PolicyRef.Name,
			Revision: r.status.Revision, CurrentStage: r.status.CurrentStage, OnFailure: r.spec.OnFailure,
			Paused: r.status.PausedAt, Clusters: r.status.Clusters, Conditions: r.status.Conditions}
		if v.OnFailure == "" {
			v.OnFailure = rolloutsv1alpha1.OnFailureHold
		}
		v.MaxFailures = "0"
		if r.spec.MaxFailures != nil {
			v.MaxFailures = r.spec.MaxFailures.String()
			if r.spec.MaxFailures.Type == intstr.String {
				if n, err := intstr.GetScaledValueFromIntOrPercent(r.spec.MaxFailures, len(r.status.Clusters), false); err == nil {
					v.MaxFailures = fmt.Sprintf("%s (%d of %d clusters)", r.spec.MaxFailures.String(), n, len(r.status.Clusters))
				}
			}
		}
		for _, c := range r.status.Clusters {
			if c.State == rolloutsv1alpha1.StateFailed || c.State == rolloutsv1alpha1.StateRolledBack {
				v.Failures++
			}
		}
		reached := false
		current := r.status.CurrentStage
		stages := r.spec.Stages
		if !slices.ContainsFunc(stages, func(st rolloutsv1alpha1.Stage) bool { return st.Name == rolloutsv1alpha1.RemainingStage }) {
			stages = append(slices.Clone(stages), rolloutsv1alpha1.Stage{Name: rolloutsv1alpha1.RemainingStage})
		}
		for _, st := range stages {
			sv := stageView{Name: st.Name, Pause: st.Pause, Gates: st.Gates, Current: st.Name == current}
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
		if m := works.FirstManifest(w); m != nil {
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
	Name, Version   string
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
			Labels: labels.Set(c.Labels).String()}
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
