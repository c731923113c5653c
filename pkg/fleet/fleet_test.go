package fleet

import (
	"github.com/federator-dev/federator/pkg/membership"

	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestFleet starts a hub and two members and walks through what the rest of
// federator relies on: kubeconfigs, the Cluster CRD on the hub, joining
// members, reaching them with the registered credentials, a member outage,
// and a clean stop.
func TestFleet(t *testing.T) {
	bins := requireBinaries(t, false)
	tmp := isolateTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	dir := filepath.Join(t.TempDir(), "fleet") // Start creates it
	began := time.Now()
	f, err := Start(ctx, Options{
		Dir:     dir,
		Members: 2,
		BinDir:  bins,
		CRDs:    []*apiextensionsv1.CustomResourceDefinition{clusterCRD(t)},
		Log:     testLog{t},
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("hub + 2 members started in %s", time.Since(began).Round(100*time.Millisecond))
	t.Cleanup(func() { _ = f.Stop() })

	if f.Hub == nil || f.Hub.Name != HubName || len(f.Members) != 2 {
		t.Fatalf("fleet = hub %v, %d members; want hub and 2 members", f.Hub, len(f.Members))
	}
	if f.Member("member2") != f.Members[1] || f.Member("member3") != nil {
		t.Fatalf("Member lookup is wrong")
	}
	pids := map[string][]int{}
	for _, c := range f.Clusters() {
		pids[c.Name] = processesUnder(t, c.workDir)
		if len(pids[c.Name]) < 2 {
			t.Fatalf("%s: found processes %v under %s; want etcd and kube-apiserver", c.Name, pids[c.Name], c.workDir)
		}
	}

	hub := hubClient(t, f.Hub.Config)

	step(t, "kubeconfigs", func(t *testing.T) {
		for _, c := range f.Clusters() {
			want := filepath.Join(dir, c.Name+".kubeconfig")
			if c.KubeconfigPath != want {
				t.Errorf("%s: KubeconfigPath = %s, want %s", c.Name, c.KubeconfigPath, want)
			}
			raw, err := clientcmd.LoadFromFile(c.KubeconfigPath)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if raw.CurrentContext != c.Name {
				t.Errorf("%s: current-context = %q", c.Name, raw.CurrentContext)
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			namespaces := &corev1.NamespaceList{}
			if err := newClient(t, cfg, nil).List(ctx, namespaces); err != nil {
				t.Fatalf("%s: listing namespaces with %s: %v", c.Name, c.KubeconfigPath, err)
			}
			if len(namespaces.Items) == 0 {
				t.Errorf("%s: no namespaces", c.Name)
			}
		}
	})

	step(t, "Cluster CRD served on the hub only", func(t *testing.T) {
		if err := hub.List(ctx, &clusterv1alpha1.ClusterList{}); err != nil {
			t.Fatalf("listing clusters.cluster.karmada.io on the hub: %v", err)
		}
		member := newClient(t, f.Members[0].Config, hubScheme())
		if err := member.List(ctx, &clusterv1alpha1.ClusterList{}); !meta.IsNoMatchError(err) {
			t.Fatalf("listing clusters on member1: err = %v, want no match (CRDs go to the hub only)", err)
		}
	})

	step(t, "register members", func(t *testing.T) {
		for _, m := range f.Members {
			if err := membership.Register(ctx, hub, m.Name, m.Config); err != nil {
				t.Fatalf("Register %s: %v", m.Name, err)
			}
		}
		// Idempotent: registering again updates in place.
		if err := membership.Register(ctx, hub, f.Members[0].Name, f.Members[0].Config); err != nil {
			t.Fatalf("Register member1 again: %v", err)
		}

		for _, m := range f.Members {
			cluster := &clusterv1alpha1.Cluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: m.Name}, cluster); err != nil {
				t.Fatal(err)
			}
			spec := cluster.Spec
			if spec.SyncMode != clusterv1alpha1.Push || spec.APIEndpoint != m.APIEndpoint() ||
				!strings.HasPrefix(spec.APIEndpoint, "https://127.0.0.1:") || spec.ID == "" ||
				spec.SecretRef == nil || *spec.SecretRef != (clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: m.Name}) ||
				spec.ImpersonatorSecretRef == nil || spec.ImpersonatorSecretRef.Name != m.Name+"-impersonator" {
				t.Errorf("%s: Cluster spec = %+v", m.Name, spec)
			}
			secret := &corev1.Secret{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: m.Name}, secret); err != nil {
				t.Fatal(err)
			}
			if len(secret.Data["token"]) == 0 || !bytes.Equal(secret.Data["caBundle"], m.Config.CAData) {
				t.Errorf("%s: secret keys %v; want token and the member's CA as caBundle", m.Name, keys(secret.Data))
			}
			if owner := metav1.GetControllerOf(secret); owner == nil || owner.Kind != "Cluster" || owner.UID != cluster.UID {
				t.Errorf("%s: secret controller = %v, want Cluster %s", m.Name, owner, cluster.UID)
			}

			member := newClient(t, m.Config, nil)
			saName := "karmada-" + m.Name
			sa := &corev1.ServiceAccount{}
			if err := member.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: saName}, sa); err != nil {
				t.Errorf("%s: ServiceAccount: %v", m.Name, err)
			}
			binding := &rbacv1.ClusterRoleBinding{}
			if err := member.Get(ctx, client.ObjectKey{Name: "karmada-controller-manager:" + saName}, binding); err != nil {
				t.Errorf("%s: ClusterRoleBinding: %v", m.Name, err)
			} else if binding.RoleRef.Name != names.GenerateRoleName(saName) || len(binding.Subjects) != 1 || binding.Subjects[0].Name != saName {
				t.Errorf("%s: ClusterRoleBinding = %+v", m.Name, binding)
			}
		}
	})

	memberConfig := func(t *testing.T, name string) *rest.Config {
		t.Helper()
		cluster := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
			t.Fatal(err)
		}
		cfg, err := membership.Config(ctx, hub, cluster)
		if err != nil {
			t.Fatalf("MemberConfig %s: %v", name, err)
		}
		if cfg.BearerToken == "" || len(cfg.CAData) == 0 || len(cfg.CertData) != 0 {
			t.Fatalf("MemberConfig %s: want a bearer token and CA only", name)
		}
		return cfg
	}
	marker := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "reached-from-hub"}}

	step(t, "registered credentials reach members", func(t *testing.T) {
		for _, m := range f.Members {
			member := newClient(t, memberConfig(t, m.Name), nil)
			cm := marker.DeepCopy()
			cm.Data = map[string]string{"cluster": m.Name}
			if err := member.Create(ctx, cm); err != nil {
				t.Fatalf("%s: creating a ConfigMap with the registered token: %v", m.Name, err)
			}
		}
	})

	step(t, "authorization is RBAC", func(t *testing.T) {
		// A token whose ServiceAccount has no binding must be refused,
		// otherwise the test above would prove nothing about RBAC.
		admin := newClient(t, f.Members[0].Config, nil)
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "unbound"}}
		if err := admin.Create(ctx, sa); err != nil {
			t.Fatal(err)
		}
		tr := &authenticationv1.TokenRequest{}
		if err := admin.SubResource("token").Create(ctx, sa, tr); err != nil {
			t.Fatal(err)
		}
		cfg := rest.AnonymousClientConfig(f.Members[0].Config)
		cfg.BearerToken = tr.Status.Token
		err := newClient(t, cfg, nil).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "denied"}})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("unbound ServiceAccount creating a ConfigMap: err = %v, want Forbidden", err)
		}
	})

	logMemory(t, f, pids)

	step(t, "member outage", func(t *testing.T) {
		m := f.Member("member2")
		cfg := memberConfig(t, m.Name)
		member := newClient(t, cfg, nil)
		if err := m.StopAPIServer(); err != nil {
			t.Fatalf("StopAPIServer: %v", err)
		}
		if err := m.StopAPIServer(); err != nil {
			t.Fatalf("StopAPIServer twice: %v", err)
		}
		if err := member.Get(ctx, client.ObjectKeyFromObject(marker), &corev1.ConfigMap{}); err == nil {
			t.Fatal("member2 answered with its API server stopped")
		}
		// The rest of the fleet is unaffected.
		if err := newClient(t, memberConfig(t, "member1"), nil).Get(ctx, client.ObjectKeyFromObject(marker), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("member1 during member2's outage: %v", err)
		}

		restarted := time.Now()
		if err := m.StartAPIServer(); err != nil {
			t.Fatalf("StartAPIServer: %v", err)
		}
		t.Logf("member2's kube-apiserver restarted in %s", time.Since(restarted).Round(100*time.Millisecond))
		if err := m.StartAPIServer(); err != nil {
			t.Fatalf("StartAPIServer twice: %v", err)
		}
		// Same endpoint, CA and signing key: the registered config and the
		// kubeconfig both still work, and etcd kept the data.
		got := &corev1.ConfigMap{}
		if err := member.Get(ctx, client.ObjectKeyFromObject(marker), got); err != nil {
			t.Fatalf("registered config after the restart: %v", err)
		}
		if got.Data["cluster"] != m.Name {
			t.Errorf("ConfigMap after the restart = %v", got.Data)
		}
		kubeconfig, err := clientcmd.BuildConfigFromFlags("", m.KubeconfigPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := newClient(t, kubeconfig, nil).Get(ctx, client.ObjectKeyFromObject(marker), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("kubeconfig after the restart: %v", err)
		}
	})

	step(t, "stop", func(t *testing.T) {
		var workDirs []string
		for _, c := range f.Clusters() {
			workDirs = append(workDirs, c.workDir)
			// StopAPIServer left the old apiserver's pid behind; collect the new one.
			pids[c.Name] = append(pids[c.Name], processesUnder(t, c.workDir)...)
		}
		stopped := time.Now()
		if err := f.Stop(); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		t.Logf("fleet stopped in %s", time.Since(stopped).Round(100*time.Millisecond))
		if err := f.Stop(); err != nil {
			t.Fatalf("second Stop: %v", err)
		}
		for name, list := range pids {
			for _, pid := range list {
				if alive(pid) {
					t.Errorf("%s: process %d is still running after Stop", name, pid)
				}
			}
		}
		for _, c := range f.Clusters() {
			if _, err := os.Stat(c.KubeconfigPath); !os.IsNotExist(err) {
				t.Errorf("%s: kubeconfig %s still there (%v)", c.Name, c.KubeconfigPath, err)
			}
		}
		for _, d := range workDirs {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("temporary directory %s still there", d)
			}
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("kubeconfig directory %s, created by Start, still there", dir)
		}
		requireEmpty(t, tmp)
	})
}

// TestFleetControllerManager checks that with ControllerManager set,
// namespaces deleted in the hub and in members really go away, token
// Secrets are filled everywhere, and only members run workload controllers.
func TestFleetControllerManager(t *testing.T) {
	bins := requireBinaries(t, true)
	tmp := isolateTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	f, err := Start(ctx, Options{
		Dir:               t.TempDir(),
		Members:           1,
		BinDir:            bins,
		ControllerManager: true,
		Log:               testLog{t},
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = f.Stop() })

	var pids []int
	for _, c := range f.Clusters() {
		found := processesUnder(t, c.workDir)
		if len(found) < 3 {
			t.Fatalf("%s: processes %v; want etcd, kube-apiserver and kube-controller-manager", c.Name, found)
		}
		pids = append(pids, found...)
	}

	for _, c := range f.Clusters() {
		cl := newClient(t, c.Config, nil)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}
		if err := cl.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		if err := cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "content"}}); err != nil {
			t.Fatal(err)
		}
		if err := cl.Delete(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	deleted := time.Now()
	deadline := deleted.Add(90 * time.Second)
	for _, c := range f.Clusters() {
		cl := newClient(t, c.Config, nil)
		for {
			err := cl.Get(ctx, client.ObjectKey{Name: "doomed"}, &corev1.Namespace{})
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: namespace doomed still there (err %v); kube-controller-manager did not finish deleting it", c.Name, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Logf("namespaces deleted in hub and member1 within %s", time.Since(deleted).Round(100*time.Millisecond))

	checkServiceAccountTokens(ctx, t, f)
	checkWorkloadControllers(ctx, t, f)

	stopLeavesNothing(t, f, pids, tmp)
}

// stopLeavesNothing stops f and checks that none of pids runs and nothing
// is left in tmp.
func stopLeavesNothing(t *testing.T, f *Fleet, pids []int, tmp string) {
	t.Helper()
	if err := f.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d is still running after Stop", pid)
		}
	}
	requireEmpty(t, tmp)
}

// TestStartWithoutBinaries: a missing build is reported with what to do.
func TestStartWithoutBinaries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	_, err := Start(context.Background(), Options{Dir: dir, BinDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "run `make binaries`") || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("err = %v; want kube-apiserver not found, run `make binaries`", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Start created %s although it could not start anything", dir)
	}
}

// TestStartCancelled: a cancelled context starts nothing and leaves nothing.
func TestStartCancelled(t *testing.T) {
	bins := requireBinaries(t, false)
	tmp := isolateTempDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "fleet")
	_, err := Start(ctx, Options{Dir: dir, Members: 2, BinDir: bins})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left behind", dir)
	}
	requireEmpty(t, tmp)
}

// TestStartFailureStopsEverything: when one part fails after API servers are
// up, Start stops all of them and removes their files.
func TestStartFailureStopsEverything(t *testing.T) {
	realBins := requireBinaries(t, false)
	tmp := isolateTempDir(t)
	bins := t.TempDir()
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.Symlink(filepath.Join(realBins, name), filepath.Join(bins, name)); err != nil {
			t.Fatal(err)
		}
	}
	broken := "#!/bin/sh\necho 'cannot start: broken on purpose' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bins, "kube-controller-manager"), []byte(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	_, err := Start(context.Background(), Options{Dir: dir, Members: 1, BinDir: bins, ControllerManager: true})
	if err == nil {
		t.Fatal("Start succeeded with a broken kube-controller-manager")
	}
	t.Logf("Start failed as expected: %v", err)
	if !strings.Contains(err.Error(), "broken on purpose") {
		t.Errorf("the error does not carry the controller manager's output")
	}
	if left := processesUnder(t, bins); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) > 0 {
		t.Errorf("files left in %s: %v", dir, entries)
	}
	requireEmpty(t, tmp)
}

// requireBinaries returns the directory with the fleet binaries:
// $KUBEBUILDER_ASSETS, or the repository's bin/. These tests run real API
// servers, so missing binaries fail the test rather than skip it.
func requireBinaries(t *testing.T, withControllerManager bool) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		abs, err := filepath.Abs(filepath.Join("..", "..", "bin"))
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	if _, err := findBinaries(dir, withControllerManager, false); err != nil {
		t.Fatalf("%v\n(the fleet tests run real API servers from %s)", err, dir)
	}
	return dir
}

// isolateTempDir points $TMPDIR at a directory of the test's own, so the
// test can check that the fleet left nothing behind and can find its
// processes by their paths.
func isolateTempDir(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

func requireEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind in the temporary directory: %s", filepath.Join(dir, e.Name()))
	}
}

// processesUnder lists the pids of running processes whose command line
// mentions path (their binary, data or certificate directory).
func processesUnder(t *testing.T, path string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(path)) || !alive(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// alive reports whether pid is a process that has not exited (zombies count
// as exited).
func alive(pid int) bool {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	return !bytes.Contains(status, []byte("State:\tZ"))
}

// logMemory logs the resident memory of each cluster's processes.
func logMemory(t *testing.T, f *Fleet, pids map[string][]int) {
	for _, c := range f.Clusters() {
		var parts []string
		var total int
		for _, pid := range pids[c.Name] {
			kb := rssKB(pid)
			total += kb
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			parts = append(parts, fmt.Sprintf("%s %d MB", strings.TrimSpace(string(comm)), kb/1024))
		}
		t.Logf("%s: resident memory %d MB (%s)", c.Name, total/1024, strings.Join(parts, ", "))
	}
}

func rssKB(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) >= 2 && fields[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(fields[1])
			return kb
		}
	}
	return 0
}

// step runs one stage of a test that later stages depend on.
func step(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, fn) {
		t.FailNow()
	}
}

func hubScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(clusterv1alpha1.Install(s))
	return s
}

func hubClient(t *testing.T, cfg *rest.Config) client.Client {
	return newClient(t, cfg, hubScheme())
}

func newClient(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme) client.Client {
	t.Helper()
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clusterCRD is the generated CRD for clusters.cluster.karmada.io when the
// repository has it, else a minimal one with the same names.
func clusterCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	path := filepath.Join("..", "..", "config", "crds", "cluster.karmada.io_clusters.yaml")
	if data, err := os.ReadFile(path); err == nil {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		t.Logf("using the generated CRD %s", path)
		return crd
	}
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "clusters.cluster.karmada.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cluster.karmada.io",
			Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "clusters", Singular: "cluster", Kind: "Cluster", ListKind: "ClusterList",
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// testLog sends the fleet's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
