package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/manifest"
	"github.com/federator-dev/federator/internal/overrides"
)

// testNow is the clock of every test hub: AGE columns are stable.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// created is a creation time age ago.
func created(age time.Duration) metav1.Time { return metav1.NewTime(testNow.Add(-age)) }

// testKinds are the kinds the tests' hub serves, with their scope and
// short names, as its discovery would say.
var testKinds = []struct {
	gvk        schema.GroupVersionKind
	plural     string
	namespaced bool
	short      []string
}{
	{appsv1.SchemeGroupVersion.WithKind("Deployment"), "deployments", true, []string{"deploy"}},
	{corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, []string{"cm"}},
	{corev1.SchemeGroupVersion.WithKind("Secret"), "secrets", true, nil},
	{corev1.SchemeGroupVersion.WithKind("Namespace"), "namespaces", false, []string{"ns"}},
	{policyv1alpha1.SchemeGroupVersion.WithKind("PropagationPolicy"), "propagationpolicies", true, []string{"pp"}},
	{policyv1alpha1.SchemeGroupVersion.WithKind("ClusterPropagationPolicy"), "clusterpropagationpolicies", false, []string{"cpp"}},
	{workv1alpha2.SchemeGroupVersion.WithKind("ResourceBinding"), "resourcebindings", true, []string{"rb"}},
	{workv1alpha2.SchemeGroupVersion.WithKind("ClusterResourceBinding"), "clusterresourcebindings", false, []string{"crb"}},
	{workv1alpha1.SchemeGroupVersion.WithKind("Work"), "works", true, []string{"wk"}},
	{clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"), "clusters", false, nil},
	{gatingv1alpha1.GroupVersion.WithKind("Gate"), "gates", true, nil},
	{rolloutsv1alpha1.GroupVersion.WithKind("Rollout"), "rollouts", true, nil},
	{rolloutsv1alpha1.GroupVersion.WithKind("ClusterRollout"), "clusterrollouts", false, nil},
}

// testMapper resolves testKinds as the CLI's mapper resolves a real hub's:
// a REST mapper behind kubectl's short-name expansion.
func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	byGroupVersion := map[string]*metav1.APIResourceList{}
	for _, k := range testKinds {
		scope := meta.RESTScopeRoot
		if k.namespaced {
			scope = meta.RESTScopeNamespace
		}
		m.Add(k.gvk, scope)
		gv := k.gvk.GroupVersion().String()
		if byGroupVersion[gv] == nil {
			byGroupVersion[gv] = &metav1.APIResourceList{GroupVersion: gv}
		}
		byGroupVersion[gv].APIResources = append(byGroupVersion[gv].APIResources, metav1.APIResource{
			Name: k.plural, Kind: k.gvk.Kind, Namespaced: k.namespaced, ShortNames: k.short})
	}
	discovery := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	for _, list := range byGroupVersion {
		discovery.Resources = append(discovery.Resources, list)
	}
	return restmapper.NewShortcutExpander(m, discovery, func(string) {})
}

// newTestHub is a hub holding objs, reached through a fake client, with
// namespace demo selected.
func newTestHub(t *testing.T, objs ...client.Object) *hub {
	t.Helper()
	mapper := testMapper()
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithRESTMapper(mapper).WithObjects(objs...).
		WithStatusSubresource(&workv1alpha1.Work{}, &workv1alpha2.ResourceBinding{}).Build()
	return &hub{client: c, mapper: mapper, namespace: "demo", host: "https://hub.test:6443",
		kubeconfig: kubeconfigChoice{paths: []string{"hub.kubeconfig"}, origin: "--kubeconfig"},
		now:        func() time.Time { return testNow }, hubNow: func() (time.Time, bool) { return testNow, true }}
}

// run runs a rollout command line against h, as a person would type it.
func run(t *testing.T, h *hub, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := &cobra.Command{Use: "federator", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(commands(func(c connection) (*hub, error) {
		h.allNamespaces = c.allNamespaces
		if c.namespace != "" {
			h.namespace = c.namespace
		}
		return h, nil
	})...)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// deployment is a Deployment template in demo.
func deployment(name, image string, generation int64, annotations map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, UID: types.UID("uid-" + name), Generation: generation,
			Annotations: annotations, CreationTimestamp: created(time.Hour)},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			}},
	}
}

// propagationPolicy is PropagationPolicy demo/name selecting Deployment name.
func propagationPolicy(name string, annotations map[string]string, suspension *policyv1alpha1.Suspension) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, Annotations: annotations, Generation: 1,
			CreationTimestamp: created(2 * time.Hour)},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
			Placement:          policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
			ConflictResolution: policyv1alpha1.ConflictAbort,
			Suspension:         suspension,
		},
	}
}

// resourceBinding is the binding the detector writes for Deployment
// demo/name claimed by PropagationPolicy demo/policy, placed on clusters.
func resourceBinding(name, policy string, clusters ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: names.GenerateBindingName("Deployment", name),
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "rb-" + name},
			Annotations: map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "demo",
				policyv1alpha1.PropagationPolicyNameAnnotation: policy},
			CreationTimestamp: created(time.Hour)},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: name},
		},
		Status: workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{
			{Type: "Scheduled", Status: metav1.ConditionTrue, Reason: "Success"},
			{Type: "FullyApplied", Status: metav1.ConditionFalse, Reason: "FullyAppliedFailed"},
			{Type: "WorksSynced", Status: metav1.ConditionTrue, Reason: "WorksSynced"},
		}},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 2})
	}
	return rb
}

func cluster(name string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: created(3 * time.Hour)},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://" + name + ".test:6443"},
		Status: clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.34.1", Conditions: []metav1.Condition{
			{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady"}}}}
}

// workFor is the Work the binding controller writes for rb's template on
// cluster, carrying tpl (as read from h) as pkg/binding builds it.
func workFor(t *testing.T, rb *workv1alpha2.ResourceBinding, tpl *unstructured.Unstructured, cluster string) *workv1alpha1.Work {
	t.Helper()
	b := bindingOf(rb)
	key := b.workKey(cluster)
	m, _, err := manifest.Render(tpl, workv1alpha2.TargetCluster{Name: cluster, Replicas: 2}, false, manifest.Origin{
		BindingNamespace: rb.Namespace, BindingName: rb.Name, BindingID: rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel],
		WorkNamespace: key.Namespace, WorkName: key.Name}, overrides.None)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(m.Object)
	if err != nil {
		t.Fatal(err)
	}
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Generation: 1,
			Labels:            map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]},
			Annotations:       map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotationKey: rb.Namespace, workv1alpha2.ResourceBindingNameAnnotationKey: rb.Name},
			CreationTimestamp: created(time.Hour)},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
}

// template reads a Deployment template back from h as the CLI does.
func template(t *testing.T, h *hub, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := getObject(context.Background(), h.client, appsv1.SchemeGroupVersion.WithKind("Deployment"), "demo", name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// memberStatus is a Deployment status as the dispatcher collects it.
func memberStatus(ready, replicas int32) *runtime.RawExtension {
	raw, _ := json.Marshal(map[string]any{"replicas": replicas, "readyReplicas": ready, "updatedReplicas": replicas,
		"generation": 4, "observedGeneration": 4})
	return &runtime.RawExtension{Raw: raw}
}
