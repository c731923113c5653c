package dashboard

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/pkg/copystate"
)

// The grid: templates by clusters, each cell a copy's state, filtered.

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
	// Running and Wants, while the copy waits (held, pending, failed):
	// what the member still runs ("" when not known) and what the Work
	// carries that the member has not taken yet ("" when it runs it).
	Running, Wants string
}

// VersionText is the version as the grid writes it: what the member
// runs, or, while the copy waits for what the Work carries (held, pending
// or failed), what it still runs and what it waits for ("runs
// nginx:1.26, wants nginx:1.27", or "wants nginx:1.27" when what it runs
// is not known).
func (c cell) VersionText() string {
	switch {
	case c.Version == "":
		return ""
	case c.Wants == "" || (c.State != copystate.Held && c.State != copystate.Pending && c.State != copystate.Failed):
		return c.Version
	case c.Running != "":
		return "runs " + c.Running + ", wants " + c.Wants
	}
	return "wants " + c.Wants
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
			if m := workkeys.FirstManifest(w); m != nil {
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
// rollout` does (pkg/copystate). The Work is current when it was
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
	c := cell{Cluster: cluster, State: st.State, Reason: st.Reason, Message: st.Message, Work: w, Targeted: targeted}
	c.Running, c.Wants = st.Waiting()
	if st.State == copystate.Pending && w != nil && !current {
		// The dashboard follows the binding, not the template itself.
		c.Message = fmt.Sprintf("the hub has not yet written the binding's generation %d into the Work (it carries %s)",
			b.obj.GetGeneration(), w.Annotations[workkeys.BindingGenerationAnnotation])
	}
	if st.ReadyReplicas != nil && st.DesiredReplicas != nil {
		c.Ready = fmt.Sprintf("%d/%d", *st.ReadyReplicas, *st.DesiredReplicas)
	}
	if w != nil {
		c.Version = copystate.VersionOf(w).Text()
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
