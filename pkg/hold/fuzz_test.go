package hold

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/fuzztest"
)

// FuzzParseGates: the annotation gating.federator.dev/gates. Every
// reference listed becomes one gate, in order, never dropped: one that can
// be read names a namespace and a name a Gate can have, one that cannot
// carries a Problem naming it and the annotation; and a gate that is not
// found, or cannot be read, holds every cluster (fail safe).
func FuzzParseGates(f *testing.F) {
	for _, seed := range [][2]string{
		{"approval", "shop"}, {" ops/approval , window ", "shop"}, {"approval", ""}, {"a/b/c,/x", "shop"},
		{",,", "shop"}, {"ops/", "shop"}, {"ops/approval\n", ""}, {"x", "Shop"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, value, namespace string) {
		const listedBy = "PropagationPolicy shop/web"
		if namespace != "" && len(validation.IsDNS1123Label(namespace)) > 0 {
			namespace = "shop" // the lister's own namespace, always a valid one
		}
		gates := ParseGates(value, namespace, listedBy)
		var listed []string
		for _, raw := range strings.Split(value, ",") {
			if ref := strings.TrimSpace(raw); ref != "" {
				listed = append(listed, ref)
			}
		}
		if len(gates) != len(listed) {
			t.Fatalf("ParseGates(%q) = %d gates for %d references %q: a reference was dropped or made up", value, len(gates), len(listed), listed)
		}
		for i, g := range gates {
			if g.ListedBy != listedBy {
				t.Fatalf("gate %+v does not say what lists it", g)
			}
			if g.Problem != "" {
				fuzztest.Explains(t, g.Problem, "gate '"+listed[i]+"'", "annotation gating.federator.dev/gates")
				continue
			}
			ns, name, ok := strings.Cut(g.Ref, "/")
			if !ok || strings.Contains(name, "/") {
				t.Fatalf("reference %q read as %q, not namespace/name", listed[i], g.Ref)
			}
			if !strings.Contains(listed[i], "/") && g.Ref != namespace+"/"+listed[i] {
				t.Fatalf("bare name %q in namespace %q read as %q", listed[i], namespace, g.Ref)
			}
			if errs := append(validation.IsDNS1123Label(ns), validation.IsDNS1123Subdomain(name)...); len(errs) > 0 {
				t.Fatalf("reference %q accepted as %q, which no Gate can have: %s", listed[i], g.Ref, errs)
			}
		}
		// Not found (the binding controller's lookup of an unknown or
		// unreadable reference): every cluster holds, and says why.
		d := Decide(Input{Template: template(nil), Policy: policy(nil), PolicyGates: gates}, []string{"member1", "member2"}, Checks)
		for c, dec := range d {
			if held := dec.Held(); held != (len(gates) > 0) {
				t.Fatalf("%d gates that do not exist, cluster %s held = %v", len(gates), c, held)
			}
			if dec.Held() && dec.Reason() != workkeys.ReasonGateClosed {
				t.Fatalf("cluster %s held with reason %s, want GateClosed", c, dec.Reason())
			}
		}
	})
}

// FuzzSuspensionAnnotations: the annotations propagation.federator.dev/suspended
// and suspended.propagation.federator.dev/<cluster>, on a template or its
// policy, with any value. Whatever the value (even "false": admission
// refuses it, but one stored holds), the annotation holds what it names
// and only that, its message names the annotation and says to remove it to
// resume, and the value comes back as the note ("true": none). A key
// naming a cluster that is not registered holds every cluster and names
// the key. Changing the value changes the holds' digest, so the change is
// taken first.
func FuzzSuspensionAnnotations(f *testing.F) {
	f.Add("member1", "incident 42", false, true, false)
	f.Add("member1", "true", true, true, false)
	f.Add("member1", "false", false, true, false)
	f.Add("memberr1", "", false, false, false)
	f.Add("", "no", true, true, false)
	f.Add("member2", "TRUE", false, true, true)
	f.Add("a/b", "\x00", true, false, true)
	f.Add("member1", " 0 ", false, true, true)
	f.Fuzz(func(t *testing.T, cluster, value string, onPolicy, registered, everyCluster bool) {
		key := policykeys.ClusterSuspendedAnnotationPrefix + cluster
		if everyCluster {
			key = policykeys.SuspendedAnnotation
		}
		annotations := map[string]string{key: value}
		in := Input{Template: template(nil), Policy: policy(nil), KnownClusters: []string{"bystander"}}
		holder := &in.Template
		if onPolicy {
			holder = &in.Policy
		}
		holder.Annotations = annotations
		if registered {
			in.KnownClusters = append(in.KnownClusters, cluster)
		}
		clusters := []string{"bystander"}
		if cluster != "bystander" {
			clusters = append(clusters, cluster)
		}
		wantNote := value
		if value == "true" {
			wantNote = ""
		}

		d := Decide(in, clusters, Checks)
		named := d[cluster]
		if everyCluster {
			named = d["bystander"]
		}
		i := slices.IndexFunc(named.Holds, func(h Hold) bool { return strings.Contains(h.Message, "annotation "+key+" on ") })
		if i < 0 {
			t.Fatalf("annotation %s: %q does not hold what it names: %+v", key, value, named.Holds)
		}
		h := named.Holds[i]
		if h.Reason != workkeys.ReasonSuspendDispatching || h.Note != wantNote {
			t.Fatalf("hold %+v: want reason SuspendDispatching and note %q", h, wantNote)
		}
		fuzztest.Explains(t, h.Message, holder.String(), "remove the annotation to resume")

		if !everyCluster && cluster != "bystander" {
			bystander := d["bystander"]
			switch {
			case registered && bystander.Held():
				t.Fatalf("annotation %s holds cluster bystander too: %s", key, bystander.Message())
			case !registered:
				if !bystander.Held() || bystander.Holds[0].Check != unknownClusterAnnotationCheck.Name {
					t.Fatalf("annotation %s names no registered Cluster, yet bystander is not held for it: %+v", key, bystander.Holds)
				}
				fuzztest.Explains(t, bystander.Message(), key, "no registered Cluster")
			}
		}

		changed := map[string]string{key: value + "!"}
		if AnnotationsDigest(annotations) == "" || !AnnotationsChanged(annotations, changed) || AnnotationsChanged(annotations, map[string]string{key: value}) {
			t.Fatalf("the digest of %s misses a change of its value", key)
		}
	})
}
