package kindfleet

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

func TestChooseNodeImage(t *testing.T) {
	for _, tc := range []struct {
		name         string
		asked        string
		localPresent bool
		want         string
	}{
		{"the image asked for wins", "example/node:v1", true, "example/node:v1"},
		{"the locally built image, when present", "", true, LocalNodeImage},
		{"kind's default otherwise", "", false, DefaultKindImage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ChooseNodeImage(tc.asked, tc.localPresent); got != tc.want {
				t.Errorf("ChooseNodeImage(%q, %v) = %q, want %q", tc.asked, tc.localPresent, got, tc.want)
			}
		})
	}
}

func TestValidatePrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		wrong  string // in the error; "" for a valid prefix
	}{
		{"federator", ""},
		{"ci-42", ""},
		{"Federator", "lowercase letters"},
		{"-fleet", "starting and ending"},
		{"fleet_a", "lowercase letters"},
		{"", "lowercase letters"},
		{strings.Repeat("a", maxPrefix), ""},
		{strings.Repeat("a", maxPrefix+1), "leave room for the cluster names"},
	} {
		err := ValidatePrefix(tc.prefix)
		switch {
		case tc.wrong == "" && err != nil:
			t.Errorf("ValidatePrefix(%q) = %v, want it valid", tc.prefix, err)
		case tc.wrong != "" && (err == nil || !strings.Contains(err.Error(), tc.wrong)):
			t.Errorf("ValidatePrefix(%q) = %v, want an error saying %q", tc.prefix, err, tc.wrong)
		}
	}
}

func TestFleetNamesAndClusterNames(t *testing.T) {
	if got, want := FleetNames(2), []string{"hub", "member1", "member2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("FleetNames(2) = %q, want %q", got, want)
	}
	if got := ClusterName("ci-7", "member2"); got != "ci-7-member2" {
		t.Errorf("ClusterName = %q", got)
	}
}

// kindClusterConfiguration is the ClusterConfiguration kind v0.30 writes
// for kubeadm (pkg/cluster/internal/kubeadm/config.go, ConfigTemplateBetaV3),
// the part a controller-manager patch meets.
const kindClusterConfiguration = `apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
controllerManager:
  extraArgs:
    enable-hostpath-provisioner: "true"
`

// What each cluster of a fleet is made of: one control-plane node from the
// chosen image, its API server published on the host's loopback, and on
// the hub only, a kube-controller-manager limited to the hub's controllers.
func TestClusterConfig(t *testing.T) {
	for _, tc := range []struct {
		fleetName       string
		wantName        string
		wantControllers string // "" for kind's default: every controller
	}{
		{"hub", "fed-hub", "namespace-controller,garbage-collector-controller,serviceaccount-token-controller"},
		{"member1", "fed-member1", ""},
		{"member12", "fed-member12", ""},
	} {
		t.Run(tc.fleetName, func(t *testing.T) {
			c := ClusterConfig("fed", tc.fleetName, "example/node:v1")
			if c.Name != tc.wantName || c.Kind != "Cluster" || c.APIVersion != "kind.x-k8s.io/v1alpha4" {
				t.Errorf("name %q, type %s/%s; want %q, kind.x-k8s.io/v1alpha4 Cluster", c.Name, c.APIVersion, c.Kind, tc.wantName)
			}
			if len(c.Nodes) != 1 || c.Nodes[0].Role != v1alpha4.ControlPlaneRole || c.Nodes[0].Image != "example/node:v1" {
				t.Errorf("nodes %+v, want one control-plane node from example/node:v1", c.Nodes)
			}
			if c.Networking.APIServerAddress != "127.0.0.1" || c.Networking.APIServerPort != 0 {
				t.Errorf("API server published at %s:%d, want 127.0.0.1 on a port kind picks", c.Networking.APIServerAddress, c.Networking.APIServerPort)
			}

			// Apply the patches as kind does: a JSON merge patch onto each
			// document of the same kind.
			doc, err := yaml.YAMLToJSON([]byte(kindClusterConfiguration))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.KubeadmConfigPatches {
				var meta struct{ Kind, APIVersion string }
				if err := yaml.Unmarshal([]byte(p), &meta); err != nil {
					t.Fatalf("patch %q: %v", p, err)
				}
				if meta.Kind != "ClusterConfiguration" || meta.APIVersion != "" {
					t.Errorf("patch matches %s %q; want ClusterConfiguration of any version", meta.Kind, meta.APIVersion)
				}
				patch, err := yaml.YAMLToJSON([]byte(p))
				if err != nil {
					t.Fatal(err)
				}
				if doc, err = jsonpatch.MergePatch(doc, patch); err != nil {
					t.Fatal(err)
				}
			}
			var got struct {
				ControllerManager struct {
					ExtraArgs map[string]string `json:"extraArgs"`
				} `json:"controllerManager"`
			}
			if err := json.Unmarshal(doc, &got); err != nil {
				t.Fatal(err)
			}
			if got.ControllerManager.ExtraArgs["controllers"] != tc.wantControllers {
				t.Errorf("kube-controller-manager --controllers=%q, want %q", got.ControllerManager.ExtraArgs["controllers"], tc.wantControllers)
			}
			if got.ControllerManager.ExtraArgs["enable-hostpath-provisioner"] != "true" {
				t.Errorf("kind's own controller-manager arguments were dropped: %v", got.ControllerManager.ExtraArgs)
			}
		})
	}
}
