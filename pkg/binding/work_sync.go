package binding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/holdwrites"
	"github.com/federator-dev/federator/internal/manifest"
	"github.com/federator-dev/federator/internal/overrides"
	"github.com/federator-dev/federator/internal/works"
	"github.com/federator-dev/federator/pkg/copystate"
	"github.com/federator-dev/federator/pkg/hold"
)

// Writing a binding's Works: one per target cluster, carrying the manifest and
// the hold decision, written only when what they carry changed.

// syncResult counts what syncWorks did, and which clusters that had a Work
// were held before it.
type syncResult struct {
	created, updated, unchanged, deleted int
	// kept counts Works of clusters no longer targeted that are not
	// deleted because the deletion delay cannot be read.
	kept int
	// adopted counts Works a deleted binding left behind, taken over.
	adopted int
	// counting counts Works of Pull clusters no longer targeted that the
	// hub keeps until their deletion delay has passed.
	counting   int
	heldBefore map[string]bool
}

func (s syncResult) String() string {
	out := fmt.Sprintf("works synced: %d created, %d updated, %d unchanged, %d deleted",
		s.created, s.updated, s.unchanged, s.deleted)
	if s.adopted > 0 {
		out += fmt.Sprintf(", %d taken over from a deleted binding", s.adopted)
	}
	if s.counting > 0 {
		out += fmt.Sprintf(", %d kept for their deletion delay", s.counting)
	}
	if s.kept > 0 {
		out += fmt.Sprintf(", %d kept (invalid deletion delay)", s.kept)
	}
	return out
}

// syncWorks writes the Work of every target, held as decisions say, with
// the deletion delay in force on its manifest, and deletes the others —
// unless the delay cannot be read: bad input never deletes.
// override is the pass's (passOverride), the one the hold input rendered
// with.
func (r *Reconciler) syncWorks(ctx context.Context, b bindingview.View, tpl *unstructured.Unstructured, in hold.Input, checks []hold.Check,
	decisions map[string]hold.Decision, delay countdown.Delay, rolledBack map[string]keptTemplate, override overrides.Func,
	pull map[string]bool) (syncResult, error) {
	res := syncResult{heldBefore: map[string]bool{}}
	existing, err := bindingview.WorksOf(ctx, r.Client, b)
	if err != nil {
		return res, err
	}
	last := map[string]*workv1alpha1.Work{}
	for i := range existing {
		last[existing[i].Namespace] = &existing[i]
		if cluster, err := names.GetClusterName(existing[i].Namespace); err == nil {
			res.heldBefore[cluster] = ptr.Deref(existing[i].Spec.SuspendDispatching, false)
		}
	}

	// A Work held or released by this pass is written in the hold lane,
	// ahead of bulk writes (internal/holdwrites).
	for cluster, held := range res.heldBefore {
		if d, ok := decisions[cluster]; ok && d.Held() != held {
			ctx = holdwrites.Hold(ctx)
			break
		}
	}

	var errs []error
	var desired []clusterWork
	wanted := map[string]bool{}
	workName := names.GenerateWorkName(tpl.GetKind(), tpl.GetName(), tpl.GetNamespace())
	for _, target := range b.Spec.Clusters {
		ns := names.GenerateExecutionSpaceName(target.Name)
		wanted[ns] = true
		o := manifest.Origin{ClusterScoped: b.ClusterScoped, BindingNamespace: b.Obj.GetNamespace(), BindingName: b.Obj.GetName(),
			BindingID: b.Obj.GetLabels()[b.IDLabel()], WorkNamespace: ns, WorkName: workName,
			ConflictResolution: b.Spec.ConflictResolution, Pull: pull[target.Name]}
		source := tpl
		var templateHash string
		if in.Rollout != nil {
			templateHash = in.Rollout.Hashes[target.Name]
		}
		render := override
		if kept, ok := rolledBack[target.Name]; ok {
			source, templateHash = kept.template, kept.hash
			if kept.rendered {
				// Sent again as it was: its overrides are in it already.
				render = kept.overridden
			}
		}
		manifest, applied, err := manifest.Render(source, target, b.Spec.Replicas > 0, o, render)
		if err != nil {
			manifest, applied = overrides.LastGood(last[ns], err)
			if manifest == nil {
				errs = append(errs, fmt.Errorf("cluster %s: %w", target.Name, err))
				continue
			}
			errs = append(errs, fmt.Errorf("cluster %s: %w (its Work keeps the last manifest that could be built)", target.Name, err))
		} else {
			withDeletionDelay(manifest, delay)
		}
		work, err := r.work(b, manifest, applied, o, decisions[target.Name], templateHash)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if kept, ok := rolledBack[target.Name]; ok {
			work.Annotations[workkeys.RolledBackAnnotation] = kept.origin
		}
		work.Annotations[workkeys.TemplateVersionAnnotation] = tpl.GetResourceVersion()
		if stored := last[ns]; stored != nil {
			// Written only along with a change (works.UpToDate ignores it):
			// what the member runs before this write may replace it, for
			// get rollout and the dashboard while the new one waits.
			if runs, ok := copystate.MemberRuns(stored); ok {
				work.Annotations[workkeys.MemberRunsAnnotation] = runs
			}
		}
		desired = append(desired, clusterWork{cluster: target.Name, work: work})
	}
	if err := r.confirmReleases(ctx, b, tpl, in, checks, decisions, desired, last); err != nil {
		return res, err
	}
	// One binding's Works are independent objects: written at once, a
	// reconcile waits for the slowest hub round trip, not for the sum of
	// them (a suspension rewrites every Work of every binding).
	results := make([]works.Result, len(desired))
	writeErrs := make([]error, len(desired))
	var g errgroup.Group
	g.SetLimit(parallelWorkWrites)
	for i, d := range desired {
		g.Go(func() error {
			results[i], writeErrs[i] = works.EnsureWork(ctx, r.Client, d.work, b.IDLabel(), works.Confirm(r.fresh()), works.AdoptOrphans(ownerGone(r.fresh(), b)))
			return nil
		})
	}
	_ = g.Wait()
	for i, result := range results {
		switch {
		case writeErrs[i] != nil:
			errs = append(errs, fmt.Errorf("cluster %s: %w", desired[i].cluster, writeErrs[i]))
		case result == works.Created:
			res.created++
		case result == works.Updated:
			res.updated++
		case result == works.Adopted:
			res.adopted++
		default:
			res.unchanged++
		}
	}
	for i := range existing {
		if wanted[existing[i].Namespace] {
			continue
		}
		if delay.Problem != "" {
			res.kept++
			continue
		}
		if r.keptForCountdown(ctx, &existing[i], pull, &errs) {
			// Its countdown has started: the delay it runs by is fixed.
			res.counting++
			continue
		}
		if err := r.carryDelay(ctx, &existing[i], delay); err != nil {
			errs = append(errs, err)
			continue
		}
		if r.keepForCountdown(ctx, &existing[i], pull, &errs) {
			res.counting++
			continue
		}
		// Deleted only as read (and as carryDelay wrote it): a stored Work
		// that moved on since the cache read it may lack the deletion
		// delay this pass saw, and its member copy would go at once. A
		// conflict is a cache behind, retried quietly.
		uid, version := existing[i].UID, existing[i].ResourceVersion
		if err := r.Client.Delete(ctx, &existing[i], client.Preconditions{UID: &uid, ResourceVersion: &version}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		} else {
			res.deleted++
		}
	}
	return res, errors.Join(errs...)
}

// clusterWork is the Work one target gets.
type clusterWork struct {
	cluster string
	work    *workv1alpha1.Work
}

// parallelWorkWrites bounds the Work writes of one binding in flight at
// once.
const parallelWorkWrites = 16

// work is the Work for one target: the manifest, and the hold decision as
// spec.suspendDispatching (so any Karmada execution controller holds it too)
// plus the hold annotations the dispatcher reports, and the overrides
// applied as Karmada records them.
func (r *Reconciler) work(b bindingview.View, manifest *unstructured.Unstructured, applied map[string]string, o manifest.Origin,
	decision hold.Decision, templateHash string) (*workv1alpha1.Work, error) {
	raw, err := json.Marshal(manifest.Object)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{b.IDLabel(): o.BindingID}
	annotations := map[string]string{
		workkeys.BindingGenerationAnnotation: strconv.FormatInt(b.Obj.GetGeneration(), 10),
	}
	for k, v := range applied {
		annotations[k] = v
	}
	if b.ClusterScoped {
		annotations[workv1alpha2.ClusterResourceBindingAnnotationKey] = o.BindingName
	} else {
		annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] = o.BindingNamespace
		annotations[workv1alpha2.ResourceBindingNameAnnotationKey] = o.BindingName
	}
	annotations[workv1alpha2.ResourceConflictResolutionAnnotation] = manifest.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation]
	if templateHash != "" {
		annotations[workkeys.TemplateHashAnnotation] = templateHash
	}
	if decision.Held() {
		annotations[workkeys.HoldReasonAnnotation] = decision.Reason()
		annotations[workkeys.HoldMessageAnnotation] = decision.Message()
		if gates := decision.Gates(); len(gates) > 0 {
			annotations[workkeys.HoldGatesAnnotation] = strings.Join(gates, ",")
		}
	}
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.WorkNamespace, Name: o.WorkName, Labels: labels,
			Annotations: annotations, Finalizers: []string{workkeys.ExecutionFinalizer}},
		Spec: workv1alpha1.WorkSpec{
			Workload:                    workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			SuspendDispatching:          ptr.To(decision.Held()),
			PreserveResourcesOnDeletion: b.Spec.PreserveResourcesOnDeletion,
		},
	}, nil
}
