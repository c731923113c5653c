package localfleet

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federator-dev/federator/config/samples"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

// Where kind members have the workload images, the sample runs
// federator/web with a readiness probe its -broken tags fail, and the
// printed steps name its tags; everything else of the sample is unchanged.
func TestKindSampleRunsTheWorkloadImage(t *testing.T) {
	o := state{Options: Options{Provider: ProviderKind, Workloads: true, Sample: true}, kindWorkloads: true}
	objs, err := yamldocs.Decode(o.sampleRollout())
	if err != nil {
		t.Fatal(err)
	}
	want, err := yamldocs.Decode(samples.Rollout)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != len(want) {
		t.Fatalf("%d objects, want the sample's %d", len(objs), len(want))
	}
	for i, u := range objs {
		if u.GetKind() != "Deployment" {
			if !reflect.DeepEqual(u.Object, want[i].Object) {
				t.Errorf("%s %s changed: %v", u.GetKind(), u.GetName(), u.Object)
			}
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		if c["image"] != "federator/web:1.25" {
			t.Errorf("image %v, want federator/web:1.25", c["image"])
		}
		probe, _, _ := unstructured.NestedMap(c, "readinessProbe", "httpGet")
		if probe["path"] != "/readyz" || fmt.Sprint(probe["port"]) != "8080" {
			t.Errorf("readinessProbe.httpGet %v, want /readyz on 8080 (the workload image's)", probe)
		}
	}
	if !o.staged() {
		t.Error("a kind fleet with the workload images does not get the sample's Rollout")
	}
	if (state{Options: Options{Provider: ProviderKind, Workloads: true}}).staged() {
		t.Error("a kind fleet without the workload images gets the sample's Rollout; -broken would fail nowhere")
	}
	if got := (state{Options: Options{Provider: ProviderKind, Workloads: true}}).sampleRollout(); !bytes.Equal(got, samples.Rollout) {
		t.Error("a kind fleet without the workload images gets a changed sample")
	}

	var out bytes.Buffer
	printReady(&out, sampleFleet(t.TempDir(), "member1", "member2", "member3"), o, time.Second)
	for _, want := range []string{
		"Deployment demo/web (federator/web:1.25) goes to every member",
		"1. Roll out federator/web:1.26; it walks through the stages by itself",
		"set image deploy/web web=federator/web:1.27-broken\n",
		"2. Roll out federator/web:1.27-broken; only member1 gets it, its new pod never becomes ready, and within a minute the rollout fails (status exits 1) and puts member1 back on federator/web:1.26;",
		"4. Roll out federator/web:1.28 and pause it",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "nginx") {
		t.Errorf("nginx named where members run federator/web:\n%s", out.String())
	}
}
