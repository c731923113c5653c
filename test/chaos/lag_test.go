package main

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/chaos/configmaps": "configmaps",
		"/api/v1/namespaces":                  "namespaces",
		"/apis/policy.karmada.io/v1alpha1/namespaces/chaos/propagationpolicies": "propagationpolicies",
		"/apis/cluster.karmada.io/v1alpha1/clusters":                            "clusters",
		"/apis/work.karmada.io/v1alpha1/works":                                  "works",
		"/healthz":                                                              "",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// A lagged watch stream passes every event, in order, none before its
// lag; a stream of another kind is not held back.
func TestDelayWriterHoldsEventsBackInOrder(t *testing.T) {
	rec := httptest.NewRecorder()
	lag := 150 * time.Millisecond
	d := newDelayWriter(rec, func() time.Duration { return lag })
	start := time.Now()
	d.WriteHeader(200)
	for _, e := range []string{"a\n", "b\n", "c\n"} {
		if _, err := d.Write([]byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	d.close()
	if took := time.Since(start); took < lag {
		t.Errorf("the events passed after %s, before their lag of %s", took, lag)
	}
	if got := rec.Body.String(); got != "a\nb\nc\n" {
		t.Errorf("the stream passed %q, want the events in order", got)
	}

	p := &lagProxy{}
	p.lag("gates", time.Second)
	if p.lagOf("gates") != time.Second || p.lagOf("works") != 0 {
		t.Errorf("lagOf(gates)=%s lagOf(works)=%s, want 1s and 0", p.lagOf("gates"), p.lagOf("works"))
	}
	p.lag("", 0)
	if p.lagOf("gates") != 0 {
		t.Error("an episode ended still lags")
	}
}

// A version released before a hold written while an informer lags may
// still be stored up to the lag after the grace; without a lag, the grace
// alone.
func TestALagStretchesOnlyWhatWasInFlight(t *testing.T) {
	at := func(ms int) time.Time { return time.UnixMilli(int64(ms)) }
	c := &checker{grace: 2 * time.Second}
	sp := span{from: at(1000), to: at(10000)}
	if got := c.inFlight("member2", sp); !got.Equal(at(12000)) {
		t.Errorf("no lag: in flight until %s, want the grace after the hold", got.Sub(at(0)))
	}
	c.faults = []fault{{Kind: faultLagInformers, Member: "propagationpolicies", From: at(8000), To: at(15000), Lag: 3 * time.Second}}
	if got := c.inFlight("member2", sp); !got.Equal(at(15000)) {
		t.Errorf("a hold written while an informer lags 3s: in flight until %s, want 15s", got.Sub(at(0)))
	}
	c.faults[0].From, c.faults[0].To = at(11000), at(15000)
	if got := c.inFlight("member2", sp); !got.Equal(at(12000)) {
		t.Errorf("a lag that began after the hold stretched it to %s", got.Sub(at(0)))
	}
}
