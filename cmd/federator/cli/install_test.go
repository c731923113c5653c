package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/config/install"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

// runInstall runs an install, uninstall, join or unjoin command line
// against h, with m standing for the clusters join reaches.
func runInstall(t *testing.T, h *hub, m members, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := &cobra.Command{Use: "federator", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(installCommands(func(connection) (*hub, error) { return h, nil }, "federator/federator:v1.2.3", m)...)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestInstallExportPrintsTheManifests(t *testing.T) {
	noHub := func(connection) (*hub, error) { return nil, errors.New("--export must not connect to a hub") }
	for _, c := range []struct {
		args  []string
		image string
	}{
		{[]string{"install", "--export"}, "federator/federator:v1.2.3"},
		{[]string{"install", "--export", "--image", "registry.example/federator:dev"}, "registry.example/federator:dev"},
	} {
		var out bytes.Buffer
		root := &cobra.Command{Use: "federator", SilenceUsage: true, SilenceErrors: true}
		root.AddCommand(installCommands(noHub, "federator/federator:v1.2.3", members{})...)
		root.SetArgs(c.args)
		root.SetOut(&out)
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		objs, err := yamldocs.Decode(out.Bytes())
		if err != nil {
			t.Fatalf("%v: the output is no YAML stream: %v", c.args, err)
		}
		want, err := install.Objects(c.image)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != len(want) {
			t.Fatalf("%v: %d objects, want %d", c.args, len(objs), len(want))
		}
		if !strings.Contains(out.String(), "image: "+c.image+"\n") {
			t.Errorf("%v: the Deployment does not run %s", c.args, c.image)
		}
	}
}

func TestInstallAppliesAndSaysWhatItWaitsFor(t *testing.T) {
	h := newTestHub(t)
	out, err := runInstall(t, h, members{}, "install", "--timeout=1s")
	if err == nil {
		t.Fatal("install returned before the Deployment was Available (the test hub runs no pods)")
	}
	for _, want := range []string{"0/2 replicas ready", "kubectl -n federator-system get pods", "federator/federator:v1.2.3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error says %q, want it to mention %q", err, want)
		}
	}
	if !strings.Contains(out, "waiting up to 1s for Deployment federator-system/federator-controller to be Available") {
		t.Errorf("install does not say what it waits for:\n%s", out)
	}
	d := &appsv1.Deployment{}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: install.Namespace, Name: install.DeploymentName}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "federator/federator:v1.2.3" {
		t.Errorf("image %q", got)
	}

	// Available: install says so and succeeds.
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}}
	if err := h.client.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	out, err = runInstall(t, h, members{}, "install", "--timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "is Available: 2/2 replicas ready") {
		t.Errorf("install output:\n%s", out)
	}
}

func TestUninstallKeepsTheCRDsUnlessAsked(t *testing.T) {
	h := newTestHub(t)
	if _, err := runInstall(t, h, members{}, "install", "--wait=false"); err != nil {
		t.Fatal(err)
	}
	out, err := runInstall(t, h, members{}, "uninstall")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := h.client.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.DeploymentName}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment is still there: %v", err)
	}
	for _, want := range []string{"Deployment federator-system/federator-controller deleted", "kept (uninstall --crds removes them",
		"14 CustomResourceDefinitions", "kept: namespace karmada-cluster"} {
		if !strings.Contains(out, want) {
			t.Errorf("uninstall does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "CustomResourceDefinition works.work.karmada.io deleted") {
		t.Errorf("uninstall deleted a CRD without --crds:\n%s", out)
	}
	out, err = runInstall(t, h, members{}, "uninstall", "--crds")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "CustomResourceDefinition works.work.karmada.io deleted") || strings.Contains(out, "Namespace karmada-cluster deleted") {
		t.Errorf("uninstall --crds:\n%s", out)
	}
}

// memberKubeconfig writes a kubeconfig of a cluster at server, with a CA
// unless insecure.
func memberKubeconfig(t *testing.T, server string, insecure bool) string {
	t.Helper()
	cluster := "    certificate-authority-data: Y2E=\n"
	if insecure {
		cluster = "    insecure-skip-tls-verify: true\n"
	}
	path := filepath.Join(t.TempDir(), "member.kubeconfig")
	if err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: m
  cluster:
    server: `+server+"\n"+cluster+`contexts:
- name: m
  context: {cluster: m, user: m}
current-context: m
users:
- name: m
  user: {token: secret}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeMembers identifies every cluster as id and registers it as Ready.
func fakeMembers(id string, registered *[]string) members {
	return members{
		identify: func(context.Context, *rest.Config) (string, error) { return id, nil },
		register: func(ctx context.Context, hub client.Client, name string, cfg *rest.Config) error {
			*registered = append(*registered, name)
			c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: clusterv1alpha1.ClusterSpec{ID: id, APIEndpoint: cfg.Host, SyncMode: clusterv1alpha1.Push,
					SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name}},
				Status: clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.34.1", Conditions: []metav1.Condition{
					{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady"}}}}
			return client.IgnoreAlreadyExists(hub.Create(ctx, c))
		},
	}
}

func TestJoinRefusesWhatItCannotJoin(t *testing.T) {
	taken := cluster("member1")
	taken.Spec.ID = "uid-of-member1"
	kubeconfig := memberKubeconfig(t, "https://edge.example:6443", false)
	unreachable := members{identify: func(context.Context, *rest.Config) (string, error) {
		return "", errors.New("dial tcp 10.0.0.9:6443: connect: connection refused")
	}}
	for _, c := range []struct {
		name    string
		members members
		args    []string
		want    []string
	}{
		{"a name another cluster holds", fakeMembers("uid-of-edge", new([]string)), []string{"join", "member1", "--kubeconfig", kubeconfig},
			[]string{"the name member1 is taken", "https://member1.test:6443", "another name", "federator unjoin member1"}},
		{"a cluster joined under another name", fakeMembers("uid-of-member1", new([]string)), []string{"join", "edge", "--kubeconfig", kubeconfig},
			[]string{"joined already, as member1", "federator unjoin member1"}},
		{"a cluster it cannot reach", unreachable, []string{"join", "edge", "--kubeconfig", kubeconfig},
			[]string{"cannot reach the cluster to join as edge at https://edge.example:6443", "connection refused", "answers from here"}},
		{"a kubeconfig without a CA", fakeMembers("uid-of-edge", new([]string)), []string{"join", "edge", "--kubeconfig", memberKubeconfig(t, "https://edge.example:6443", true)},
			[]string{"no certificate authority", "certificate-authority-data"}},
		{"a name Karmada refuses", fakeMembers("uid-of-edge", new([]string)), []string{"join", "Edge_1", "--kubeconfig", kubeconfig},
			[]string{`cluster name "Edge_1"`}},
		{"no member kubeconfig", fakeMembers("uid-of-edge", new([]string)), []string{"join", "edge"},
			[]string{"--kubeconfig names the kubeconfig file of the cluster to join"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newTestHub(t, taken)
			var registered []string
			m := c.members
			if m.register == nil {
				m.register = fakeMembers("", &registered).register
			} else {
				inner := m.register
				m.register = func(ctx context.Context, hub client.Client, name string, cfg *rest.Config) error {
					registered = append(registered, name)
					return inner(ctx, hub, name, cfg)
				}
			}
			_, err := runInstall(t, h, m, c.args...)
			if err == nil {
				t.Fatal("join succeeded")
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if len(registered) > 0 {
				t.Errorf("join registered %v before refusing", registered)
			}
		})
	}
}

func TestJoinRegistersAndWaitsUntilReady(t *testing.T) {
	h := newTestHub(t)
	var registered []string
	kubeconfig := memberKubeconfig(t, "https://edge.example:6443", false)
	out, err := runInstall(t, h, fakeMembers("uid-of-edge", &registered), "join", "edge", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cluster edge joined", "waiting up to 2m0s for Cluster edge to be Ready", "cluster edge is Ready (Kubernetes v1.34.1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("join does not say %q:\n%s", want, out)
		}
	}
	// The same cluster again: its credentials are renewed.
	out, err = runInstall(t, h, fakeMembers("uid-of-edge", &registered), "join", "edge", "--kubeconfig", kubeconfig, "--wait=false")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "renewing its credentials") || len(registered) != 2 {
		t.Errorf("joining the same cluster again (registered %v):\n%s", registered, out)
	}
}

func TestJoinSaysWhyTheClusterIsNotReady(t *testing.T) {
	h := newTestHub(t)
	m := members{
		identify: func(context.Context, *rest.Config) (string, error) { return "uid-of-edge", nil },
		register: func(ctx context.Context, hub client.Client, name string, cfg *rest.Config) error {
			return hub.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: clusterv1alpha1.ClusterSpec{ID: "uid-of-edge", APIEndpoint: cfg.Host},
				Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady,
					Status: metav1.ConditionFalse, Reason: "ClusterNotReachable", Message: "cluster is not reachable"}}}})
		},
	}
	_, err := runInstall(t, h, m, "join", "edge", "--kubeconfig", memberKubeconfig(t, "https://edge.example:6443", false), "--timeout=1s")
	if err == nil || !strings.Contains(err.Error(), "ClusterNotReachable: cluster is not reachable") ||
		!strings.Contains(err.Error(), "https://edge.example:6443") {
		t.Errorf("join of a cluster the hub cannot reach: %v", err)
	}
}

func TestUnjoinSaysWhatHappensThenRemovesTheCluster(t *testing.T) {
	c := unjoinCluster(true)
	secret, impersonator := unjoinSecrets()
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-edge", Name: "web-deployment"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"}}`)}}}}}}
	preserved := work.DeepCopy()
	preserved.Name, preserved.Spec.PreserveResourcesOnDeletion = "db-statefulset", ptr.To(true)
	delayed := work.DeepCopy()
	delayed.Name = "api-deployment"
	delayed.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api","namespace":"shop",` +
		`"annotations":{"federator.dev/deletion-delay":"1h"}}}`)
	ns := work.DeepCopy()
	ns.Name = "shop-namespace"
	ns.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}`)
	h := newTestHub(t, c, secret, impersonator, work, preserved, delayed, ns, cluster("member1"))
	out, err := runInstall(t, h, members{}, "unjoin", "edge")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"its 4 Works in karmada-es-edge are deleted", "1 object deleted from edge",
		"staying there, no longer managed: 1 preserved by their policy (preserveResourcesOnDeletion), 1 with a deletion delay, 1 namespace(s) the hub propagated",
		"Cluster edge deleted", "Cluster edge is gone", "Secret karmada-cluster/edge deleted", "Secret karmada-cluster/edge-impersonator deleted"} {
		if !strings.Contains(out, want) {
			t.Errorf("unjoin does not say %q:\n%s", want, out)
		}
	}
	for _, o := range []client.Object{&clusterv1alpha1.Cluster{ObjectMeta: c.ObjectMeta}, secret, impersonator} {
		if err := h.client.Get(context.Background(), client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s is still there: %v", o, o.GetName(), err)
		}
	}
	_, err = runInstall(t, h, members{}, "unjoin", "edge")
	if err == nil || !strings.Contains(err.Error(), "no cluster edge is joined") || !strings.Contains(err.Error(), "joined: member1") {
		t.Errorf("unjoin of an unknown cluster: %v", err)
	}
}

func unjoinCluster(ready bool) *clusterv1alpha1.Cluster {
	c := cluster("edge")
	c.Spec.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "edge"}
	c.Spec.ImpersonatorSecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "edge-impersonator"}
	status := metav1.ConditionTrue
	reason, message := "ClusterReady", "cluster is healthy and ready to accept workloads"
	if !ready {
		status, reason, message = metav1.ConditionFalse, "ClusterNotReachable", "cluster is not reachable"
	}
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status, Reason: reason, Message: message}}
	return c
}

func unjoinSecrets() (secret, impersonator *corev1.Secret) {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "edge"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "edge-impersonator"}}
}

func TestUnjoinOfAClusterNotReadySaysItsObjectsStay(t *testing.T) {
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-edge", Name: "web-deployment"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"}}`)}}}}}}
	h := newTestHub(t, unjoinCluster(false), work)
	out, err := runInstall(t, h, members{}, "unjoin", "edge", "--wait=false")
	if err != nil {
		t.Fatal(err)
	}
	want := "its 1 Work in karmada-es-edge is deleted without reaching edge, which is not Ready (ClusterNotReachable: cluster is not reachable): " +
		"the objects they placed there stay, no longer managed"
	if !strings.Contains(out, want) {
		t.Errorf("unjoin does not say %q:\n%s", want, out)
	}
}

func TestUnjoinSaysWhatHoldsTheClusterWhenItGivesUp(t *testing.T) {
	c := unjoinCluster(true)
	c.Finalizers = []string{"karmada.io/cluster-controller"}
	secret, impersonator := unjoinSecrets()
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-edge", Name: "web-deployment",
		Finalizers: []string{"karmada.io/execution-controller"}}}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "edge"}}}}

	t.Run("--wait=false returns at once and keeps the credentials the controller still needs", func(t *testing.T) {
		h := newTestHub(t, c.DeepCopy(), secret.DeepCopy(), impersonator.DeepCopy(), work.DeepCopy())
		out, err := runInstall(t, h, members{}, "unjoin", "edge", "--wait=false")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "not waiting (--wait=false)") || !strings.Contains(out, "kubectl -n karmada-cluster delete secret edge edge-impersonator") {
			t.Errorf("unjoin --wait=false says:\n%s", out)
		}
		if err := h.client.Get(context.Background(), client.ObjectKeyFromObject(secret), &corev1.Secret{}); err != nil {
			t.Errorf("the credentials are deleted while the Cluster is still there: %v", err)
		}
	})

	for _, tc := range []struct {
		name string
		objs []client.Object
		want []string
	}{
		{"Works left", []client.Object{work.DeepCopy()}, []string{
			"the Cluster edge is still there after 1s, held by its finalizers karmada.io/cluster-controller",
			"1 Work is left in karmada-es-edge (web-deployment)", "if none is running against this hub",
			"kubectl patch cluster edge --type merge"}},
		{"a binding still targets it", []client.Object{rb}, []string{
			"bindings still target edge (ResourceBinding shop/api-deployment)"}},
		{"nothing left: no controller removes the finalizer", nil, []string{
			"No Work is left and no binding targets edge: federator's controller removes the finalizer, is one running against this hub"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHub(t, append(tc.objs, c.DeepCopy(), secret.DeepCopy(), impersonator.DeepCopy())...)
			out, err := runInstall(t, h, members{}, "unjoin", "edge", "--timeout=1s")
			if err == nil {
				t.Fatalf("unjoin returned while the Cluster is still there:\n%s", out)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("unjoin's error does not say %q: %v", want, err)
				}
			}
			if !strings.Contains(out, "Cluster edge deleted") {
				t.Errorf("unjoin says:\n%s", out)
			}
			if err := h.client.Get(context.Background(), client.ObjectKeyFromObject(secret), &corev1.Secret{}); err != nil {
				t.Errorf("the credentials are deleted while the Cluster is still there: %v", err)
			}
		})
	}
}

// runInstallOn runs an install command line whose --kubeconfig reaches hub
// and whose --host-kubeconfig reaches host.
func runInstallOn(t *testing.T, hubC, host *hub, args ...string) (stdout string, err error) {
	t.Helper()
	var out bytes.Buffer
	root := &cobra.Command{Use: "federator", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(installCommands(func(c connection) (*hub, error) {
		if c.kubeconfigFlag == "host-kubeconfig" {
			return host, nil
		}
		return hubC, nil
	}, "federator/federator:v1.2.3", members{})...)
	root.SetArgs(args)
	root.SetOut(&out)
	err = root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestInstallOnAHostRunsTheControllerThereAgainstTheHub(t *testing.T) {
	hubC, host := newTestHub(t), newTestHub(t)
	hubC.config = &rest.Config{Host: "https://127.0.0.1:40001", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("hub-ca")}}
	host.host = "https://host.test:6443"
	ctx := context.Background()
	deployment := client.ObjectKey{Namespace: install.Namespace, Name: install.DeploymentName}

	out, err := runInstallOn(t, hubC, host, "install", "--host-kubeconfig", "host.kubeconfig", "--hub-server", "https://10.89.0.2:6443", "--wait=false")
	if err != nil {
		t.Fatal(err)
	}
	if err := host.client.Get(ctx, deployment, &appsv1.Deployment{}); err != nil {
		t.Errorf("no Deployment on the host: %v", err)
	}
	if err := hubC.client.Get(ctx, deployment, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("the hub got the Deployment too (%v): it would run there, or sit as a template", err)
	}
	if err := hubC.client.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.ServiceAccountName}, &corev1.ServiceAccount{}); err != nil {
		t.Errorf("no ServiceAccount on the hub for the controller to be: %v", err)
	}
	secret := &corev1.Secret{}
	if err := host.client.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.HubKubeconfigSecret}, secret); err != nil {
		t.Fatalf("no hub kubeconfig Secret on the host: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[install.HubKubeconfigKey])
	if err != nil {
		t.Fatalf("the Secret holds no kubeconfig: %v\n%s", err, secret.Data[install.HubKubeconfigKey])
	}
	if cfg.Host != "https://10.89.0.2:6443" || cfg.BearerToken != "fake-token" || string(cfg.CAData) != "hub-ca" {
		t.Errorf("the controller reaches %s with token %q and CA %q; want --hub-server, the minted token and the hub's CA", cfg.Host, cfg.BearerToken, cfg.CAData)
	}
	for _, want := range []string{"Deployment federator-system/federator-controller applied (host)", "Secret federator-system/federator-hub-kubeconfig applied (host)",
		"CustomResourceDefinition works.work.karmada.io applied\n", "reaches the hub at https://10.89.0.2:6443 as ServiceAccount federator-system/federator-controller"} {
		if !strings.Contains(out, want) {
			t.Errorf("install does not say %q:\n%s", want, out)
		}
	}

	out, err = runInstallOn(t, hubC, host, "uninstall", "--host-kubeconfig", "host.kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []client.Object{&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: deployment.Namespace, Name: deployment.Name}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: install.Namespace, Name: install.HubKubeconfigSecret}}} {
		if err := host.client.Get(ctx, client.ObjectKeyFromObject(gone), gone); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s is still on the host after uninstall: %v", gone, gone.GetName(), err)
		}
	}
	if err := hubC.client.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.ServiceAccountName}, &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
		t.Errorf("the controller's ServiceAccount is still on the hub: %v", err)
	}
	if !strings.Contains(out, "Deployment federator-system/federator-controller deleted (host)") || strings.Contains(out, "Deployment federator-system/federator-controller not found") {
		t.Errorf("uninstall output:\n%s", out)
	}
}

func TestInstallRefusesHostFlagsThatWouldBeIgnored(t *testing.T) {
	noHub := func(connection) (*hub, error) { return nil, errors.New("must not connect") }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"install", "--hub-server", "https://10.0.0.1:6443"}, "--hub-server is the hub's address for a controller in another cluster: pass --host-kubeconfig too"},
		{[]string{"install", "--host-context", "kind"}, "--host-context names a context of --host-kubeconfig"},
		{[]string{"uninstall", "--host-context", "kind"}, "--host-context names a context of --host-kubeconfig"},
		{[]string{"install", "--export", "--host-kubeconfig", "h"}, "drop --export"},
		{[]string{"install", "--host-kubeconfig", "h", "--hub-server", "10.0.0.1:6443"}, `--hub-server "10.0.0.1:6443": give the hub API server's URL`},
	} {
		root := &cobra.Command{Use: "federator", SilenceUsage: true, SilenceErrors: true}
		root.AddCommand(installCommands(noHub, "federator/federator:v1.2.3", members{})...)
		root.SetArgs(c.args)
		root.SetOut(&bytes.Buffer{})
		err := root.ExecuteContext(context.Background())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to say %q", c.args, err, c.want)
		}
	}
}
