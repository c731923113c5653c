package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/federator-dev/federator/pkg/yamldocs"
)

// TestKustomizationsListTheirFiles: the kustomization.yaml of crds/ and
// admission/ lists exactly the other YAML files there, so `kubectl apply -k
// config/install` and `federator install` apply every CRD and admission
// policy the packages there embed for pkg/hubinstall and `federator up`,
// and no file that is not there.
func TestKustomizationsListTheirFiles(t *testing.T) {
	for _, dir := range []string{"crds", "admission"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, f := range files {
			if filepath.Base(f) != "kustomization.yaml" {
				want = append(want, filepath.Base(f))
			}
		}
		if len(want) == 0 {
			t.Fatalf("config/install/%s holds no YAML files: the test reads the wrong directory", dir)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var k kustomization
		if err := yaml.UnmarshalStrict(stripKustomizationHeader(raw), &k); err != nil {
			t.Fatalf("config/install/%s/kustomization.yaml: %v", dir, err)
		}
		listed := slices.Clone(k.Resources)
		sort.Strings(listed)
		if !slices.Equal(listed, want) {
			var unlisted, stray []string
			for _, f := range want {
				if !slices.Contains(listed, f) {
					unlisted = append(unlisted, f)
				}
			}
			for i, f := range listed {
				if !slices.Contains(want, f) || i > 0 && listed[i-1] == f {
					stray = append(stray, f)
				}
			}
			t.Errorf("config/install/%s/kustomization.yaml does not list %v, YAML files of its directory, and lists %v, "+
				"which are not there or listed twice: run `make kustomizations`", dir, unlisted, stray)
		}
	}
}

func objects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Objects("")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func convert[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

func TestObjectsHoldTheInstall(t *testing.T) {
	kinds := map[string]int{}
	for _, o := range objects(t) {
		kinds[o.GetKind()]++
	}
	for kind, n := range map[string]int{"CustomResourceDefinition": 14, "ValidatingAdmissionPolicy": 5,
		"ValidatingAdmissionPolicyBinding": 5, "Deployment": 1, "Service": 1, "ServiceAccount": 1} {
		if kinds[kind] != n {
			t.Errorf("%d %s, want %d", kinds[kind], kind, n)
		}
	}
	if first := objects(t)[0]; first.GetKind() != "Namespace" || first.GetName() != Namespace {
		t.Errorf("first object is %s %s: the namespace must come first, so the rest can be applied into it", first.GetKind(), first.GetName())
	}
}

// TestEveryContainerIsRestricted: every pod the manifests run meets the
// restricted Pod Security Standard and more: non-root, read-only root
// filesystem, no privilege escalation, no capabilities, seccomp
// RuntimeDefault; with probes and resource requests.
func TestEveryContainerIsRestricted(t *testing.T) {
	var deployments int
	for _, o := range objects(t) {
		if o.GetKind() != "Deployment" {
			continue
		}
		deployments++
		d := convert[appsv1.Deployment](t, o)
		pod := d.Spec.Template.Spec
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
			t.Errorf("Deployment %s: replicas %v, want 2 (one leads, one stands by)", d.Name, d.Spec.Replicas)
		}
		if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
			t.Errorf("Deployment %s: pod securityContext.runAsNonRoot is not true", d.Name)
		}
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			checkContainer(t, d.Name, c, pod.Volumes)
		}
	}
	if deployments == 0 {
		t.Fatal("no Deployment in config/install")
	}
}

func checkContainer(t *testing.T, deployment string, c corev1.Container, volumes []corev1.Volume) {
	t.Helper()
	where := "Deployment " + deployment + " container " + c.Name
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Errorf("%s: no securityContext", where)
		return
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Errorf("%s: runAsNonRoot is not true", where)
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Errorf("%s: readOnlyRootFilesystem is not true", where)
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Errorf("%s: allowPrivilegeEscalation is not false", where)
	case sc.Privileged != nil && *sc.Privileged:
		t.Errorf("%s: privileged", where)
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("%s: capabilities %+v, want drop [ALL] and nothing added", where, sc.Capabilities)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: seccompProfile %+v, want RuntimeDefault", where, sc.SeccompProfile)
	}
	if c.LivenessProbe == nil || c.ReadinessProbe == nil {
		t.Errorf("%s: liveness and readiness probes are both needed", where)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("%s: cpu and memory requests are both needed", where)
	}
	// The binary writes under /tmp at start; the root filesystem is read-only.
	tmp := false
	for _, m := range c.VolumeMounts {
		for _, v := range volumes {
			if m.MountPath == "/tmp" && m.Name == v.Name && v.EmptyDir != nil {
				tmp = true
			}
		}
	}
	if !tmp {
		t.Errorf("%s: no emptyDir at /tmp", where)
	}
	if c.Name == ContainerName && !slices.Contains(c.Args, "--install-crds=false") {
		t.Errorf("%s: args %v lack --install-crds=false: the manifests install the CRDs, the controller may not", where, c.Args)
	}
}

// TestRBACIsLeastPrivilege: Secrets are readable only in karmada-cluster,
// Leases only in federator-system, and nothing grants every verb.
func TestRBACIsLeastPrivilege(t *testing.T) {
	for _, o := range objects(t) {
		var rules []rbacv1.PolicyRule
		switch o.GetKind() {
		case "ClusterRole":
			rules = convert[rbacv1.ClusterRole](t, o).Rules
		case "Role":
			rules = convert[rbacv1.Role](t, o).Rules
		default:
			continue
		}
		where := o.GetKind() + " " + strings.TrimPrefix(o.GetNamespace()+"/"+o.GetName(), "/")
		for _, r := range rules {
			if grants(r, "", "secrets") && !(o.GetKind() == "Role" && o.GetNamespace() == "karmada-cluster") {
				t.Errorf("%s grants %v on Secrets: only a Role in karmada-cluster may (member credentials)", where, r.Verbs)
			}
			if grants(r, "coordination.k8s.io", "leases") && !(o.GetKind() == "Role" && o.GetNamespace() == Namespace) {
				t.Errorf("%s grants %v on Leases: only a Role in %s may (leader election)", where, r.Verbs, Namespace)
			}
			if slices.Contains(r.Verbs, rbacv1.VerbAll) {
				t.Errorf("%s grants every verb on %v %v", where, r.APIGroups, r.Resources)
			}
			if grants(r, "apiextensions.k8s.io", "customresourcedefinitions") &&
				slices.ContainsFunc(r.Verbs, func(v string) bool { return v == "create" || v == "update" || v == "delete" }) {
				t.Errorf("%s lets the controller create, update or delete CRDs: the manifests install them", where)
			}
		}
	}
}

func grants(r rbacv1.PolicyRule, group, resource string) bool {
	return (slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, rbacv1.APIGroupAll)) &&
		(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, rbacv1.ResourceAll))
}

func TestGrantsSeesWildcards(t *testing.T) {
	for _, c := range []struct {
		rule rbacv1.PolicyRule
		want bool
	}{
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"secrets"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"*"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"*"}}, false},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}}, false},
	} {
		if got := grants(c.rule, "", "secrets"); got != c.want {
			t.Errorf("grants(%v %v, secrets) = %v, want %v", c.rule.APIGroups, c.rule.Resources, got, c.want)
		}
	}
}

func TestImageIsSet(t *testing.T) {
	objs, err := Objects("registry.example/federator:v9")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			if got := convert[appsv1.Deployment](t, o).Spec.Template.Spec.Containers[0].Image; got != "registry.example/federator:v9" {
				t.Errorf("image %q", got)
			}
		}
	}
	for _, o := range objects(t) {
		if o.GetKind() == "Deployment" {
			if got := convert[appsv1.Deployment](t, o).Spec.Template.Spec.Containers[0].Image; got != ImageRepository+":latest" {
				t.Errorf("default image %q, want %s:latest, the tag `make image` writes", got, ImageRepository)
			}
		}
	}
}

// TestKustomizeBuildsTheSameObjects: what `federator install` applies is
// what `kubectl apply -k config/install` does (bin/kubectl, `make binaries`).
func TestKustomizeBuildsTheSameObjects(t *testing.T) {
	kubectl, err := filepath.Abs(filepath.Join("..", "..", "bin", "kubectl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("no %s (make binaries)", kubectl)
	}
	out, err := exec.Command(kubectl, "kustomize", ".").Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/install: %v", err)
	}
	built, err := yamldocs.Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	key := func(o *unstructured.Unstructured) string {
		return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	want := map[string]map[string]any{}
	for _, o := range built {
		want[key(o)] = o.Object
	}
	got := map[string]map[string]any{}
	for _, o := range objects(t) {
		got[key(o)] = o.Object
	}
	for k, v := range want {
		if got[k] == nil {
			t.Errorf("kubectl kustomize builds %s, Objects lacks it", k)
		} else if !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s differs between kubectl kustomize and Objects", k)
		}
	}
	for k := range got {
		if want[k] == nil {
			t.Errorf("Objects has %s, kubectl kustomize does not build it", k)
		}
	}
}

// TestHostSplit: a controller in a host cluster gets, there, only what runs
// it (its namespace, the Deployment reading the hub's kubeconfig from a
// Secret, mounting no token of the host, as restricted as ever, and the
// metrics Service); everything else, the API and the controller's identity
// and rights, goes to the hub, where its Lease is taken.
func TestHostSplit(t *testing.T) {
	objs := objects(t)
	hub, host, err := HostSplit(objs)
	if err != nil {
		t.Fatal(err)
	}
	var hostKinds []string
	for _, o := range host {
		hostKinds = append(hostKinds, o.GetKind()+" "+o.GetName())
	}
	if want := []string{"Namespace " + Namespace, "Deployment " + DeploymentName, "Service federator-controller-metrics"}; !slices.Equal(hostKinds, want) {
		t.Errorf("host gets %v, want %v", hostKinds, want)
	}
	if len(hub)+len(host) != len(objs)+1 {
		t.Errorf("hub %d + host %d objects from %d: only the namespace goes to both", len(hub), len(host), len(objs))
	}
	for _, o := range hub {
		if o.GetKind() == "Deployment" || o.GetKind() == "Service" {
			t.Errorf("the hub gets %s %s", o.GetKind(), o.GetName())
		}
	}
	if hub[0].GetKind() != "Namespace" || host[0].GetKind() != "Namespace" {
		t.Errorf("the namespace must come first on both")
	}

	d := convert[appsv1.Deployment](t, host[1])
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != "" || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("the host's pods run as ServiceAccount %q, automount %v: they need no token of the host", pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	c := pod.Containers[0]
	checkContainer(t, d.Name, c, pod.Volumes)
	if !slices.Contains(c.Args, "--kubeconfig=/etc/federator/hub/kubeconfig") {
		t.Errorf("args %v: the controller does not read the hub's kubeconfig", c.Args)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if m.Name == v.Name && m.MountPath == "/etc/federator/hub" && m.ReadOnly && v.Secret != nil && v.Secret.SecretName == HubKubeconfigSecret {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("Secret %s is not mounted read-only at /etc/federator/hub: %+v %+v", HubKubeconfigSecret, c.VolumeMounts, pod.Volumes)
	}
	// The split leaves the in-hub manifests as they were.
	if in := convert[appsv1.Deployment](t, findObject(t, objs, "Deployment", DeploymentName)); in.Spec.Template.Spec.ServiceAccountName != ServiceAccountName ||
		slices.ContainsFunc(in.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.HasPrefix(a, "--kubeconfig") }) {
		t.Errorf("HostSplit changed the in-hub Deployment: %+v", in.Spec.Template.Spec)
	}

	s := convert[corev1.Secret](t, HubKubeconfigSecretObject([]byte("apiVersion: v1\n")))
	if s.Namespace != Namespace || string(s.Data[HubKubeconfigKey]) != "apiVersion: v1\n" {
		t.Errorf("Secret %s/%s data %q", s.Namespace, s.Name, s.Data)
	}
}

func findObject(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}
