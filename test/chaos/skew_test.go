package main

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

func TestAStoredRequestCountsOnlyWhenTheHubTimedIt(t *testing.T) {
	// The write was sent at 1.4 s and returned at 1.6 s (the hub's clock):
	// the CLI stamps the second of the hub's answer, 1 s; the webhook the
	// receiver's instant.
	sent, done := at(1400), at(1600)
	stamp := func(ms int) string { return at(ms).Format(time.RFC3339Nano) }
	cases := []struct {
		name        string
		annotations map[string]string
		open        bool
		want        gateState
		ok          bool
	}{
		{"the CLI's open, stamped with the second of the hub's answer", map[string]string{gatingv1alpha1.OpenRequestAnnotation: stamp(1000)},
			true, gateState{OpenAt: at(1000)}, true},
		{"the webhook's close, the receiver's instant", map[string]string{gatingv1alpha1.CloseRequestAnnotation: stamp(1500)},
			false, gateState{CloseAt: at(1500)}, true},
		{"close --for 3s: the flip-back counts from the hub's stamp",
			map[string]string{gatingv1alpha1.CloseRequestAnnotation: stamp(1000), gatingv1alpha1.OpenRequestAnnotation: stamp(4000)},
			false, gateState{CloseAt: at(1000), OpenAt: at(4000)}, true},
		{"stamped by a clock 5 minutes fast", map[string]string{gatingv1alpha1.CloseRequestAnnotation: stamp(301400)}, false, gateState{}, false},
		{"stamped by a clock 5 minutes slow", map[string]string{gatingv1alpha1.CloseRequestAnnotation: stamp(-298600)}, false, gateState{}, false},
		{"the request is not there (another one is)", map[string]string{gatingv1alpha1.OpenRequestAnnotation: stamp(1500)}, false, gateState{}, false},
		{"not a time", map[string]string{gatingv1alpha1.OpenRequestAnnotation: "soon"}, true, gateState{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
			got, ok := storedRequest(g, tc.open, sent, done)
			if ok != tc.ok || (ok && !got.OpenAt.Equal(tc.want.OpenAt)) || (ok && !got.CloseAt.Equal(tc.want.CloseAt)) {
				t.Fatalf("storedRequest = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSkewedCallersAreDrawnFromTheirOwnSource(t *testing.T) {
	a, b := newGateCallers(7, "", nil), newGateCallers(7, "", nil)
	seen := map[string]int{}
	for range 300 {
		var x, y op
		a.draw(&x)
		b.draw(&y)
		if x.Caller != y.Caller || x.Skew != y.Skew {
			t.Fatalf("one seed drew %+v and %+v", x, y)
		}
		if x.Skew > maxSkew || x.Skew < -maxSkew {
			t.Fatalf("skew %s beyond %s", x.Skew, maxSkew)
		}
		seen[x.Caller]++
	}
	for _, c := range []string{callerAnnotation, callerCLI, callerWebhook} {
		if seen[c] < 50 {
			t.Errorf("caller %q drawn %d times of 300", c, seen[c])
		}
	}
	var none *gateCallers
	o := op{Kind: opGateOpen}
	none.draw(&o)
	if o.Caller != callerAnnotation || o.Skew != 0 {
		t.Errorf("without skew-clocks a request was given caller %q, skew %s", o.Caller, o.Skew)
	}
}
