package cli

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/config/install"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

// pullHub is a test hub whose kubeconfig names a CA, as an agent's
// kubeconfig needs.
func pullHub(t *testing.T, objs ...client.Object) *hub {
	t.Helper()
	h := newTestHub(t, objs...)
	h.config = &rest.Config{Host: h.host, TLSClientConfig: rest.TLSClientConfig{CAData: []byte("hub-ca")}}
	return h
}

// pullMember is a test cluster to join in Pull mode: kube-system has a
// UID, its id.
func pullMember(t *testing.T, objs ...client.Object) *hub {
	t.Helper()
	m := newTestHub(t, append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: types.UID("uid-of-edge")}})...)
	m.host = "https://edge.example:6443"
	return m
}

// runJoin runs a join or unjoin command line whose hub is h and whose
// --kubeconfig (join) or --cluster-kubeconfig (unjoin) reaches member;
// a nil member fails the test if reached.
func runJoin(t *testing.T, h, member *hub, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := &cobra.Command{Use: "federator", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(installCommands(func(c connection) (*hub, error) {
		switch c.kubeconfigFlag {
		case "kubeconfig", "cluster-kubeconfig":
			if member == nil {
				t.Errorf("%v reached a member cluster", args)
				return nil, errors.New("no member here")
			}
			return member, nil
		}
		return h, nil
	}, "federator/federator:v1.2.3", members{})...)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// agentManifests are the objects a YAML stream holds, by kind.
func agentManifests(t *testing.T, stream string) map[string]*unstructured.Unstructured {
	t.Helper()
	objs, err := yamldocs.Decode([]byte(stream))
	if err != nil {
		t.Fatalf("not a YAML stream: %v\n%s", err, stream)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[o.GetKind()] = o
	}
	return out
}

func decodeInto(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if u == nil {
		t.Fatalf("no %T in the manifests", into)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatal(err)
	}
}

// TestJoinPullExportPrintsTheAgentManifests: the flags of join --mode
// pull --export, and the manifests they print.
func TestJoinPullExportPrintsTheAgentManifests(t *testing.T) {
	for _, c := range []struct {
		name             string
		args             []string
		server, image    string
		endpointArg      string
		wantArgsContains []string
	}{
		{"the defaults", nil, "https://hub.test:6443", "federator/federator:v1.2.3", "", nil},
		{"Karmada's spelling of the mode", []string{"--mode", "Pull"}, "https://hub.test:6443", "federator/federator:v1.2.3", "", nil},
		{"the hub by another address", []string{"--hub-api-endpoint", "https://10.89.0.2:6443"}, "https://10.89.0.2:6443", "federator/federator:v1.2.3", "", nil},
		{"an image and the cluster's address", []string{"--image", "registry.example/federator:dev", "--cluster-api-endpoint", "https://edge.example:6443"},
			"https://hub.test:6443", "registry.example/federator:dev", "--cluster-api-endpoint=https://edge.example:6443", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := pullHub(t)
			args := append([]string{"join", "edge", "--export"}, c.args...)
			if !slices.Contains(c.args, "--mode") {
				args = append(args, "--mode", "pull")
			}
			stdout, stderr, err := runJoin(t, h, nil, args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Cluster edge registered on the hub https://hub.test:6443 in Pull mode",
				"as ServiceAccount karmada-cluster/federator-agent-edge", "apply them in edge (kubectl apply -f -)"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("join --export does not say on stderr %q:\n%s", want, stderr)
				}
			}
			objs := agentManifests(t, stdout)
			var kinds []string
			for _, o := range must(yamldocs.Decode([]byte(stdout))) {
				kinds = append(kinds, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
			}
			want := []string{"Namespace /federator-system", "ServiceAccount federator-system/federator-agent", "ClusterRole /federator-agent",
				"ClusterRoleBinding /federator-agent", "Secret federator-system/karmada-kubeconfig", "Deployment federator-system/federator-agent"}
			if !slices.Equal(kinds, want) {
				t.Errorf("join --export prints %v; want %v, in that order", kinds, want)
			}

			secret := &corev1.Secret{}
			decodeInto(t, objs["Secret"], secret)
			cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[install.AgentHubKubeconfigKey])
			if err != nil {
				t.Fatalf("the Secret holds no kubeconfig: %v", err)
			}
			if cfg.Host != c.server || cfg.BearerToken != "fake-token" || string(cfg.CAData) != "hub-ca" {
				t.Errorf("the agent reaches %s with token %q and CA %q; want %s, the token minted on the hub and the hub's CA",
					cfg.Host, cfg.BearerToken, cfg.CAData, c.server)
			}

			d := &appsv1.Deployment{}
			decodeInto(t, objs["Deployment"], d)
			pod := d.Spec.Template.Spec
			container := pod.Containers[0]
			wantArgs := []string{"agent", "--cluster-name=edge", "--karmada-kubeconfig=/etc/kubeconfig/karmada-kubeconfig", "--leader-elect=true",
				"--leader-elect-resource-namespace=federator-system", "--metrics-bind-address=:8080", "--health-probe-bind-address=:10357"}
			if c.endpointArg != "" {
				wantArgs = append(wantArgs, c.endpointArg)
			}
			if !slices.Equal(container.Args, wantArgs) {
				t.Errorf("the agent runs with %q; want %q", container.Args, wantArgs)
			}
			if container.Image != c.image || pod.ServiceAccountName != "federator-agent" || *d.Spec.Replicas != 2 {
				t.Errorf("the agent runs %s as %s, %d replicas; want %s as federator-agent, 2", container.Image, pod.ServiceAccountName,
					*d.Spec.Replicas, c.image)
			}
			probes := map[string]int32{}
			for _, p := range container.Ports {
				probes[p.Name] = p.ContainerPort
			}
			if container.LivenessProbe.HTTPGet.Path != "/healthz" || container.ReadinessProbe.HTTPGet.Path != "/readyz" ||
				container.LivenessProbe.HTTPGet.Port.StrVal != "http-probes" || probes["http-probes"] != 10357 || probes["http-metrics"] != 8080 {
				t.Errorf("probes %+v, %+v on ports %v; want /healthz and /readyz on 10357, metrics on 8080",
					container.LivenessProbe.HTTPGet, container.ReadinessProbe.HTTPGet, probes)
			}
			mounted := false
			for _, v := range pod.Volumes {
				if v.Secret != nil && v.Secret.SecretName == secret.Name {
					for _, m := range container.VolumeMounts {
						mounted = mounted || m.Name == v.Name && m.MountPath == "/etc/kubeconfig"
					}
				}
			}
			if !mounted {
				t.Errorf("the Secret is not mounted where --karmada-kubeconfig reads it: %+v, %+v", pod.Volumes, container.VolumeMounts)
			}

			role := &rbacv1.ClusterRole{}
			decodeInto(t, objs["ClusterRole"], role)
			if len(role.Rules) == 0 || !slices.Equal(role.Rules[0].Resources, []string{"*"}) || !slices.Equal(role.Rules[0].Verbs, []string{"*"}) {
				t.Errorf("the agent's ClusterRole %+v; want every right, as karmada-agent's", role.Rules)
			}
			binding := &rbacv1.ClusterRoleBinding{}
			decodeInto(t, objs["ClusterRoleBinding"], binding)
			if binding.RoleRef.Name != role.Name || binding.Subjects[0].Name != pod.ServiceAccountName || binding.Subjects[0].Namespace != d.Namespace {
				t.Errorf("the binding %+v does not give the ClusterRole to the agent's ServiceAccount", binding)
			}

			cluster := &clusterv1alpha1.Cluster{}
			if err := h.client.Get(context.Background(), client.ObjectKey{Name: "edge"}, cluster); err != nil || !membership.Pull(cluster) {
				t.Errorf("on the hub, Cluster edge %v (%v); want it registered in Pull mode", cluster.Spec.SyncMode, err)
			}

			// Again: the token is renewed, and standard output is still the manifests alone.
			again, stderr, err := runJoin(t, h, nil, args...)
			if err != nil {
				t.Fatal(err)
			}
			if objs, err := yamldocs.Decode([]byte(again)); err != nil || len(objs) != len(want) {
				t.Errorf("join --export again prints %d objects (%v); want %d:\n%s", len(objs), err, len(want), again)
			}
			if !strings.Contains(stderr, "renewing its agent's token and manifests") {
				t.Errorf("join --export again does not say on stderr that it renews the token:\n%s", stderr)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestJoinRefusesBadInputAndChangesNothing: each refusal says what to do,
// and neither the hub nor the cluster is written.
func TestJoinRefusesBadInputAndChangesNothing(t *testing.T) {
	kubeconfig := memberKubeconfig(t, "https://edge.example:6443", false)
	push := cluster("member1")
	push.Spec.ID = "uid-of-edge"
	otherAgent := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: install.Namespace, Name: install.AgentName}}
	for _, c := range []struct {
		name   string
		args   []string
		member bool
		want   []string
	}{
		{"a mode that is neither", []string{"join", "edge", "--mode", "sideways", "--kubeconfig", kubeconfig}, false,
			[]string{`--mode "sideways": push`, "or pull"}},
		{"--export in Push mode", []string{"join", "edge", "--export"}, false,
			[]string{"--export is for --mode pull", "add --mode pull"}},
		{"an agent's image in Push mode", []string{"join", "edge", "--kubeconfig", kubeconfig, "--image", "x"}, false,
			[]string{"--image is for --mode pull"}},
		{"--export with a kubeconfig", []string{"join", "edge", "--mode", "pull", "--export", "--kubeconfig", kubeconfig}, false,
			[]string{"--export prints the agent's manifests instead of writing them", "drop --kubeconfig"}},
		{"--export with a context", []string{"join", "edge", "--mode", "pull", "--export", "--context", "x"}, false,
			[]string{"--context names a context of --kubeconfig, which --export does not use"}},
		{"neither a kubeconfig nor --export", []string{"join", "edge", "--mode", "pull"}, false,
			[]string{"--kubeconfig names the kubeconfig file of the cluster the agent's manifests go into", "or --export"}},
		{"a hub address that is none", []string{"join", "edge", "--mode", "pull", "--export", "--hub-api-endpoint", "10.89.0.2:6443"}, false,
			[]string{`--hub-api-endpoint "10.89.0.2:6443": give an API server's URL`}},
		{"an empty image", []string{"join", "edge", "--mode", "pull", "--export", "--image", ""}, false,
			[]string{"--image is empty"}},
		{"a name registered in Push mode, exported", []string{"join", "member1", "--mode", "pull", "--export"}, false,
			[]string{"cluster member1 is registered in Push mode (spec.syncMode: Push)", "federator unjoin member1"}},
		{"a name registered in Push mode, written", []string{"join", "member1", "--mode", "pull", "--kubeconfig", kubeconfig}, true,
			[]string{"cluster member1 is registered in Push mode (spec.syncMode: Push)", "federator unjoin member1"}},
		{"a cluster joined under another name", []string{"join", "edge", "--mode", "pull", "--kubeconfig", kubeconfig}, true,
			[]string{"joined already, as member1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := pullHub(t, push.DeepCopy())
			var member *hub
			if c.member {
				member = pullMember(t)
			}
			_, _, err := runJoin(t, h, member, c.args...)
			if err == nil {
				t.Fatal("join succeeded")
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			ctx := context.Background()
			clusters := &clusterv1alpha1.ClusterList{}
			if err := h.client.List(ctx, clusters); err != nil || len(clusters.Items) != 1 || membership.Pull(&clusters.Items[0]) {
				t.Errorf("the hub's Clusters after the refusal: %+v (%v); want member1 alone, in Push mode", clusters.Items, err)
			}
			if err := h.client.Get(ctx, client.ObjectKey{Namespace: membership.ClusterNamespace, Name: membership.AgentName("edge")},
				&corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
				t.Errorf("the hub has an agent ServiceAccount after the refusal: %v", err)
			}
			if member != nil {
				if err := member.client.Get(ctx, client.ObjectKeyFromObject(otherAgent), &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
					t.Errorf("the cluster has the agent's Deployment after the refusal: %v", err)
				}
			}
		})
	}
}

// TestJoinPullWritesTheAgentIntoTheCluster, and joining again renews it;
// waiting, join says who reports the Cluster Ready.
func TestJoinPullWritesTheAgentIntoTheCluster(t *testing.T) {
	h, member := pullHub(t), pullMember(t)
	kubeconfig := memberKubeconfig(t, member.host, true)
	out, _, err := runJoin(t, h, member, "join", "edge", "--mode", "pull", "--kubeconfig", kubeconfig, "--timeout=1s")
	if err == nil || !strings.Contains(err.Error(), "joined in Pull mode but not Ready after 1s: no agent has reported it yet") ||
		!strings.Contains(err.Error(), "kubectl -n federator-system logs deployment/federator-agent") {
		t.Errorf("join of a cluster whose agent does not report: %v", err)
	}
	for _, want := range []string{"Deployment federator-system/federator-agent applied (cluster edge)",
		"Secret federator-system/karmada-kubeconfig applied (cluster edge)", "cluster edge joined: Cluster edge registered on the hub",
		"waiting up to 1s for Cluster edge to be Ready (its agent, Deployment federator-system/federator-agent in edge, reports it)"} {
		if !strings.Contains(out, want) {
			t.Errorf("join does not say %q:\n%s", want, out)
		}
	}
	ctx := context.Background()
	d := &appsv1.Deployment{}
	if err := member.client.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.AgentName}, d); err != nil {
		t.Fatalf("no agent Deployment in the cluster: %v", err)
	}
	if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--cluster-api-endpoint=https://edge.example:6443") {
		t.Errorf("the agent does not register the address join reached the cluster at: %q", d.Spec.Template.Spec.Containers[0].Args)
	}
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: install.Namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: install.Namespace, Name: install.AgentName}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: install.AgentName}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: install.AgentName}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: install.Namespace, Name: install.AgentHubKubeconfigSecret}}} {
		if err := member.client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Errorf("%T %s is not in the cluster: %v", o, o.GetName(), err)
		}
	}

	// The agent reported: joining again renews the token, and waits no more.
	cluster := &clusterv1alpha1.Cluster{}
	if err := h.client.Get(ctx, client.ObjectKey{Name: "edge"}, cluster); err != nil {
		t.Fatal(err)
	}
	cluster.Spec.ID = "uid-of-edge"
	cluster.Status = clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.34.1",
		Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady"}}}
	if err := h.client.Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	out, _, err = runJoin(t, h, member, "join", "edge", "--mode", "pull", "--kubeconfig", kubeconfig)
	if err != nil || !strings.Contains(out, "renewing its agent's token and manifests") || !strings.Contains(out, "cluster edge is Ready (Kubernetes v1.34.1)") {
		t.Errorf("joining again: %v\n%s", err, out)
	}
}

// agentIn is a cluster holding the agent of cluster, as join wrote it.
func agentIn(t *testing.T, cluster string) *hub {
	t.Helper()
	objs, err := agentInMember(cluster)
	if err != nil {
		t.Fatal(err)
	}
	m := pullMember(t)
	if err := m.client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: install.Namespace}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := m.client.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func pullCluster(name string) *clusterv1alpha1.Cluster {
	c := cluster(name)
	c.Spec.SyncMode = clusterv1alpha1.Pull
	return c
}

// pullClusterOnHub is Pull cluster name with what RegisterPull made for its agent.
func pullClusterOnHub(t *testing.T, name string) *hub {
	t.Helper()
	h := pullHub(t)
	if _, err := membership.RegisterPull(context.Background(), h.client, name); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestUnjoinOfAPullClusterDeletesItsAgent(t *testing.T) {
	ctx := context.Background()
	t.Run("--cluster-kubeconfig: from the hub and the cluster, but its namespace", func(t *testing.T) {
		h, member := pullClusterOnHub(t, "edge"), agentIn(t, "edge")
		out, _, err := runJoin(t, h, member, "unjoin", "edge", "--cluster-kubeconfig", "edge.kubeconfig")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range membership.PullObjects("edge") {
			if err := h.client.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
				t.Errorf("%T %s is still on the hub: %v", o, o.GetName(), err)
			}
		}
		objs, _ := agentInMember("edge")
		for _, o := range objs {
			if err := member.client.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
				t.Errorf("%s %s is still in the cluster: %v", o.GetKind(), o.GetName(), err)
			}
		}
		if err := member.client.Get(ctx, client.ObjectKey{Name: install.Namespace}, &corev1.Namespace{}); err != nil {
			t.Errorf("namespace %s is gone from the cluster: %v", install.Namespace, err)
		}
		for _, want := range []string{"Cluster edge is gone", "ServiceAccount karmada-cluster/federator-agent-edge deleted",
			"Deployment federator-system/federator-agent deleted (cluster edge)", "Lease federator-system/federator-agent-edge deleted (cluster edge)",
			"ClusterRole federator-agent deleted (cluster edge)", "in edge, namespace federator-system stays"} {
			if !strings.Contains(out, want) {
				t.Errorf("unjoin does not say %q:\n%s", want, out)
			}
		}
		if strings.Index(out, "Deployment federator-system/federator-agent deleted") > strings.Index(out, "Secret federator-system/karmada-kubeconfig deleted") {
			t.Errorf("unjoin deleted the agent's Secret before its Deployment:\n%s", out)
		}
	})
	t.Run("without it, unjoin says what stays in the cluster and how to delete it", func(t *testing.T) {
		h := pullClusterOnHub(t, "edge")
		out, _, err := runJoin(t, h, nil, "unjoin", "edge")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"the agent stays, its token void", "kubectl -n federator-system delete deployment/federator-agent secret/karmada-kubeconfig " +
			"serviceaccount/federator-agent lease/federator-agent-edge; kubectl delete clusterrolebinding/federator-agent clusterrole/federator-agent"} {
			if !strings.Contains(out, want) {
				t.Errorf("unjoin does not say %q:\n%s", want, out)
			}
		}
	})
	for _, c := range []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		member  *hub
		args    []string
		want    string
	}{
		{"a Push cluster", cluster("edge"), agentIn(t, "edge"), nil,
			"--cluster-kubeconfig deletes a Pull cluster's agent, and edge is in Push mode"},
		{"not waiting for the Cluster to go", pullCluster("edge"), agentIn(t, "edge"), []string{"--wait=false"},
			"which --wait=false does not wait for"},
		{"the agent of another cluster", pullCluster("edge"), agentIn(t, "edge2"), nil,
			"is the agent of cluster edge2, not edge: is that the kubeconfig of edge? Nothing was changed"},
		{"a context without a kubeconfig", pullCluster("edge"), nil, []string{"--cluster-context", "x"},
			"--cluster-context names a context of --cluster-kubeconfig"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			h := pullHub(t, c.cluster)
			args := append([]string{"unjoin", "edge"}, c.args...)
			if c.member != nil {
				args = append(args, "--cluster-kubeconfig", "edge.kubeconfig")
			}
			_, _, err := runJoin(t, h, c.member, args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("unjoin: %v; want it refused, saying %q", err, c.want)
			}
			if err := h.client.Get(ctx, client.ObjectKey{Name: "edge"}, &clusterv1alpha1.Cluster{}); err != nil {
				t.Errorf("the Cluster is gone after the refusal: %v", err)
			}
			if c.member != nil {
				if err := c.member.client.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.AgentName}, &appsv1.Deployment{}); err != nil {
					t.Errorf("the agent is gone from the cluster after the refusal: %v", err)
				}
			}
		})
	}
}

// TestJoinPullRefusedByTheClusterRegistersNothing: a user who may not
// create the agent's ClusterRole in the cluster is told so before the hub
// registers anything.
func TestJoinPullRefusedByTheClusterRegistersNothing(t *testing.T) {
	h, member := pullHub(t), pullMember(t)
	member.client = interceptor.NewClient(member.client.(client.WithWatch), interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if u, ok := obj.(interface{ GetKind() string }); ok && u.GetKind() == "ClusterRole" {
				return apierrors.NewForbidden(rbacv1.Resource("clusterroles"), install.AgentName, errors.New("user edge-dev cannot create clusterroles"))
			}
			return c.Apply(ctx, obj, opts...)
		}})
	_, _, err := runJoin(t, h, member, "join", "edge", "--mode", "pull", "--kubeconfig", memberKubeconfig(t, member.host, false),
		"--timeout=1s")
	for _, want := range []string{"join on the cluster edge https://edge.example:6443: ClusterRole federator-agent", "cannot create clusterroles",
		"join --mode pull needs a cluster administrator", "nothing was changed, on the hub nor in edge"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("join refused by the cluster: %v; want it to say %q", err, want)
		}
	}
	if err := h.client.Get(context.Background(), client.ObjectKey{Name: "edge"}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("the hub registered edge before the cluster took the manifests: %v", err)
	}
}
