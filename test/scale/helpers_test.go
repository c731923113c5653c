package scale

import (
	"context"
	"fmt"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const policyName = "all-deployments"

// createNamespace creates a hub namespace and waits until namespace sync
// has put it in every member.
func (e *env) createNamespace(ctx context.Context, b *testing.B, ns string) {
	b.Helper()
	if err := e.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatalf("create namespace %s: %v", ns, err)
	}
	waitFor(ctx, b, "namespace "+ns+" in every member", time.Minute, func(ctx context.Context) (bool, string, error) {
		for m, c := range e.members {
			if err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); err != nil {
				return false, m + ": " + err.Error(), nil
			}
		}
		return true, "", nil
	})
}

// createPolicy selects every Deployment of ns, by kind, for every member.
func (e *env) createPolicy(ctx context.Context, ns string) error {
	var clusters []string
	for _, m := range e.fleet.Members {
		clusters = append(clusters, m.Name)
	}
	return e.hub.Create(ctx, &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: policyName},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}},
		},
	})
}

// patchPolicy merge-patches the policy, as `kubectl patch --type merge`.
func (e *env) patchPolicy(ctx context.Context, ns, mergePatch string) error {
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: policyName}}
	return e.hub.Patch(ctx, pp, client.RawPatch(types.MergePatchType, []byte(mergePatch)))
}

func (e *env) createDeployment(ctx context.Context, ns, name, image string) error {
	labels := map[string]string{"app": name}
	return e.hub.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	})
}

// setImage changes a template's image, as `kubectl set image` does.
func (e *env) setImage(ctx context.Context, ns, name, image string) error {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image)
	return e.hub.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)))
}

// membersWithImage counts, per member, the Deployments of ns named in want
// that run image.
func (e *env) membersWithImage(ctx context.Context, ns string, want map[string]bool, image string) (map[string]int, error) {
	out := map[string]int{}
	for m, c := range e.members {
		list := &appsv1.DeploymentList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		out[m] = 0
		for _, d := range list.Items {
			cs := d.Spec.Template.Spec.Containers
			if want[d.Name] && len(cs) > 0 && cs[0].Image == image {
				out[m]++
			}
		}
	}
	return out, nil
}

// waitMembersHave waits until every member runs every template of want at
// image.
func (e *env) waitMembersHave(ctx context.Context, b *testing.B, ns string, want map[string]bool, image string, limit time.Duration) {
	b.Helper()
	waitFor(ctx, b, fmt.Sprintf("%d Deployments at %s in every member", len(want), image), limit,
		func(ctx context.Context) (bool, string, error) {
			counts, err := e.membersWithImage(ctx, ns, want, image)
			if err != nil {
				return false, "", err
			}
			done := true
			for _, n := range counts {
				done = done && n == len(want)
			}
			return done, fmt.Sprintf("per member: %v", counts), nil
		})
}

// works returns the Works of the templates of ns, in every execution
// namespace.
func (e *env) works(ctx context.Context, ns string) ([]workv1alpha1.Work, error) {
	var out []workv1alpha1.Work
	for m := range e.members {
		list := &workv1alpha1.WorkList{}
		if err := e.hub.List(ctx, list, client.InNamespace(names.GenerateExecutionSpaceName(m))); err != nil {
			return nil, err
		}
		for _, w := range list.Items {
			if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] == ns {
				out = append(out, w)
			}
		}
	}
	return out, nil
}

// waitWorks waits until there are n Works per member for ns and ok holds
// for each of them.
func (e *env) waitWorks(ctx context.Context, b *testing.B, what, ns string, n int, limit time.Duration, ok func(*workv1alpha1.Work) bool) {
	b.Helper()
	want := n * len(e.members)
	waitFor(ctx, b, what, limit, func(ctx context.Context) (bool, string, error) {
		works, err := e.works(ctx, ns)
		if err != nil {
			return false, "", err
		}
		good := 0
		for i := range works {
			if ok(&works[i]) {
				good++
			}
		}
		return len(works) == want && good == want, fmt.Sprintf("%d of %d Works (%d exist)", good, want, len(works)), nil
	})
}

func dispatchingReason(w *workv1alpha1.Work) string {
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDispatching); c != nil {
		return c.Reason
	}
	return ""
}

// waitFor polls check every 250ms until it reports done, failing b after
// limit with the last progress it reported.
func waitFor(ctx context.Context, b *testing.B, what string, limit time.Duration, check func(context.Context) (bool, string, error)) {
	b.Helper()
	deadline := time.Now().Add(limit)
	var progress string
	var lastErr error
	for {
		done, p, err := check(ctx)
		if err == nil && done {
			return
		}
		progress, lastErr = p, err
		if time.Now().After(deadline) {
			b.Fatalf("waited %s for %s: %s (last error: %v)", limit, what, progress, lastErr)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitQuiet waits until the hub has written nothing but leases for quiet
// (read every second) and returns the reading at the start of that quiet
// time and when that reading was taken. It gives up after limit: a hub that
// never stops writing is itself a finding, reported by the caller.
func (e *env) waitQuiet(ctx context.Context, quiet, limit time.Duration) (writes, time.Time, bool, error) {
	began := time.Now()
	last, err := scrapeWrites(ctx, e.hubCS)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	lastChange := time.Now()
	for {
		time.Sleep(time.Second)
		now, err := scrapeWrites(ctx, e.hubCS)
		if err != nil {
			return nil, time.Time{}, false, err
		}
		if now.total("leases") != last.total("leases") {
			last, lastChange = now, time.Now()
		}
		if time.Since(lastChange) >= quiet {
			return last, lastChange, true, nil
		}
		if time.Since(began) > limit {
			return now, time.Now(), false, nil
		}
	}
}
