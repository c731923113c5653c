package dispatch

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	// Through JSON, as a manifest arrives: integers stay int64.
	raw, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestRetain(t *testing.T) {
	const job = `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  parallelism: 2
  template:
    metadata: {labels: {app: migrate}}
    spec: {restartPolicy: Never, containers: [{name: m, image: migrate:2}]}
`
	const memberJob = `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  parallelism: 1
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: "1234"}}
  template:
    metadata: {labels: {app: migrate, batch.kubernetes.io/controller-uid: "1234", batch.kubernetes.io/job-name: migrate, controller-uid: "1234", job-name: migrate}}
    spec: {restartPolicy: Never, containers: [{name: m, image: migrate:1}]}
`
	deployment := func(label string, replicas int) string {
		return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop` + label + `}
spec: {replicas: ` + map[int]string{2: "2", 7: "7"}[replicas] + `}
`
	}
	cases := []struct {
		name            string
		desired, member string
		path            []string
		want            any
		wantAbsent      bool
	}{
		{"a Job keeps the selector the member generated", job, memberJob,
			[]string{"spec", "selector", "matchLabels", "batch.kubernetes.io/controller-uid"}, "1234", false},
		{"a Job keeps the template labels the member generated", job, memberJob,
			[]string{"spec", "template", "metadata", "labels", "job-name"}, "migrate", false},
		{"a Job still gets the hub's changes", job, memberJob, []string{"spec", "parallelism"}, int64(2), false},
		{"a Deployment under retain-replicas keeps the member's replicas",
			deployment(", labels: {resourcetemplate.karmada.io/retain-replicas: \"true\"}", 2), deployment("", 7),
			[]string{"spec", "replicas"}, int64(7), false},
		{"a Deployment without the label gets the hub's replicas", deployment("", 2), deployment("", 7),
			[]string{"spec", "replicas"}, int64(2), false},
		// Under server-side apply these three would survive without the
		// rule too (the e2e specs cannot tell); the rows guard the rules.
		{"a Service keeps the cluster IP the member allocated",
			`{apiVersion: v1, kind: Service, metadata: {name: web, namespace: shop}, spec: {type: NodePort, ports: [{port: 80, nodePort: 30080}]}}`,
			`{apiVersion: v1, kind: Service, metadata: {name: web, namespace: shop}, spec: {type: NodePort, clusterIP: 10.0.0.7, clusterIPs: [10.0.0.7], ports: [{port: 80, nodePort: 30080}]}}`,
			[]string{"spec", "clusterIP"}, "10.0.0.7", false},
		{"a ServiceAccount keeps the secrets the member's controller listed",
			`{apiVersion: v1, kind: ServiceAccount, metadata: {name: builder, namespace: shop}, imagePullSecrets: [{name: registry}]}`,
			`{apiVersion: v1, kind: ServiceAccount, metadata: {name: builder, namespace: shop}, secrets: [{name: builder-token-x}]}`,
			[]string{"secrets"}, []any{map[string]any{"name": "builder-token-x"}}, false},
		{"a ServiceAccount still gets the hub's image pull secrets",
			`{apiVersion: v1, kind: ServiceAccount, metadata: {name: builder, namespace: shop}, imagePullSecrets: [{name: registry}]}`,
			`{apiVersion: v1, kind: ServiceAccount, metadata: {name: builder, namespace: shop}, secrets: [{name: builder-token-x}]}`,
			[]string{"imagePullSecrets"}, []any{map[string]any{"name": "registry"}}, false},
		{"a PersistentVolumeClaim keeps the volume the member bound it to",
			`{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: shop, labels: {tier: primary}}, spec: {accessModes: [ReadWriteOnce]}}`,
			`{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: shop}, spec: {accessModes: [ReadWriteOnce], volumeName: pv-1}}`,
			[]string{"spec", "volumeName"}, "pv-1", false},
		{"a kind without a rule is left as it is", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: shop}, data: {a: "1"}}`,
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: shop}, data: {a: "0", b: "2"}}`,
			[]string{"data", "b"}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := retain(object(t, tc.desired), object(t, tc.member))
			if err != nil {
				t.Fatal(err)
			}
			v, found, _ := unstructured.NestedFieldNoCopy(got.Object, tc.path...)
			if tc.wantAbsent {
				if found {
					t.Errorf("%v = %v, want absent", tc.path, v)
				}
				return
			}
			if !found || !reflect.DeepEqual(v, tc.want) {
				t.Errorf("%v = %v (found %v), want %v", tc.path, v, found, tc.want)
			}
		})
	}
	if got, err := retain(object(t, job), nil); err != nil || got.Object["spec"].(map[string]any)["selector"] != nil {
		t.Errorf("creating (no member object): %v, %v", got, err)
	}
}
