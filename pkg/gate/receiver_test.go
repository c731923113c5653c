package gate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fixture"
)

// signedFor is the headers of a call POSTed to path, signed at timestamp
// (Unix seconds), as the curl and openssl example of
// docs/guides/approvals-and-windows.md makes them.
func signedFor(path, body, key string, timestamp int64) map[string]string {
	ts := strconv.FormatInt(timestamp, 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(ts + ".POST." + path + "." + body))
	return map[string]string{"X-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil)), "X-Signature-Timestamp": ts}
}

// signed is the headers of a call that opens ops/approval, signed at
// timestamp.
func signed(body, key string, timestamp int64) map[string]string {
	return signedFor("/hooks/gates/ops/approval/open", body, key, timestamp)
}

// hookedGate is the gate ops/approval with the Secret ops/hook its
// webhook calls are checked against, holding token.
func hookedGate(token string) []client.Object {
	return []client.Object{
		&gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "approval"},
			Spec: gatingv1alpha1.GateSpec{SecretRef: &corev1.LocalObjectReference{Name: "hook"}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "hook"}, Data: map[string][]byte{"token": []byte(token)}},
	}
}

// receiverNow is the receivers' clock in these tests.
var receiverNow = at("2026-11-23T12:00:00Z")

func TestReceiver(t *testing.T) {
	const token = "s3cret"
	cases := []struct {
		name       string
		method     string
		path       string
		body       string
		headers    map[string]string
		wantStatus int
		wantAnn    string // the request annotation written, "" for none
	}{
		{"a good bearer token opens", "POST", "/hooks/gates/ops/approval/open", "", map[string]string{"Authorization": "Bearer " + token},
			http.StatusAccepted, gatingv1alpha1.OpenRequestAnnotation},
		{"a good HMAC signature closes", "POST", "/hooks/gates/ops/approval/close", `{"why":"incident"}`,
			signedFor("/hooks/gates/ops/approval/close", `{"why":"incident"}`, token, receiverNow.Unix()), http.StatusAccepted, gatingv1alpha1.CloseRequestAnnotation},
		{"a signature of another body is refused", "POST", "/hooks/gates/ops/approval/open", `{"a":1}`,
			map[string]string{"X-Signature-256": signed(`{"a":2}`, token, receiverNow.Unix())["X-Signature-256"],
				"X-Signature-Timestamp": strconv.FormatInt(receiverNow.Unix(), 10)}, http.StatusUnauthorized, ""},
		{"a wrong token is refused", "POST", "/hooks/gates/ops/approval/open", "", map[string]string{"Authorization": "Bearer guess"},
			http.StatusUnauthorized, ""},
		{"no credentials are refused before the gate is looked up", "POST", "/hooks/gates/ops/nope/open", "", nil,
			http.StatusUnauthorized, ""},
		{"an unknown gate is not found", "POST", "/hooks/gates/ops/nope/open", "", map[string]string{"Authorization": "Bearer " + token},
			http.StatusNotFound, ""},
		{"a gate without a secretRef has no receiver", "POST", "/hooks/gates/ops/plain/open", "", map[string]string{"Authorization": "Bearer " + token},
			http.StatusNotFound, ""},
		{"GET is not allowed", "GET", "/hooks/gates/ops/approval/open", "", map[string]string{"Authorization": "Bearer " + token},
			http.StatusMethodNotAllowed, ""},
		{"an unknown action is not allowed", "POST", "/hooks/gates/ops/approval/toggle", "", map[string]string{"Authorization": "Bearer " + token},
			http.StatusMethodNotAllowed, ""},
		{"an oversized body is refused", "POST", "/hooks/gates/ops/approval/open", strings.Repeat("x", MaxBody+1),
			map[string]string{"Authorization": "Bearer " + token}, http.StatusRequestEntityTooLarge, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(append(hookedGate(token),
				&gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "plain"}})...).Build()
			rec := record.NewFakeRecorder(10)
			rc := &Receiver{Client: c, Secrets: c, Recorder: rec, Clock: clocktesting.NewFakePassiveClock(receiverNow)}
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			rc.ServeHTTP(w, req)
			if w.Code != tc.wantStatus {
				t.Errorf("status %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), tc.wantStatus)
			}
			g := &gatingv1alpha1.Gate{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: "approval"}, g); err != nil {
				t.Fatal(err)
			}
			events := fixture.Events(rec)
			if tc.wantAnn == "" {
				if len(g.Annotations) != 0 || len(events) != 0 {
					t.Errorf("refused call changed the gate %v or sent events %q", g.Annotations, events)
				}
				return
			}
			if g.Annotations[tc.wantAnn] != "2026-11-23T12:00:00Z" {
				t.Errorf("annotations = %v, want %s set to the call's time", g.Annotations, tc.wantAnn)
			}
			if len(events) != 1 || !strings.HasPrefix(events[0], "Normal WebhookRequest ") {
				t.Errorf("events = %q, want one WebhookRequest", events)
			}
		})
	}
}

// A signed call is accepted once, and only while its timestamp is within
// MaxSkew of the receiver's clock; each refusal says what is wrong.
func TestReceiverRefusesReplays(t *testing.T) {
	const token, body = "s3cret", `{"ticket":"CHG-1"}`
	now := receiverNow
	type call struct {
		headers    map[string]string
		wantStatus int
		wantBody   string // part of the answer
		body       string // the call's body when not body
	}
	fresh := signed(body, token, now.Unix())
	tampered := signed(body, token, now.Unix())
	tampered["X-Signature-Timestamp"] = strconv.FormatInt(now.Add(time.Minute).Unix(), 10)
	cases := []struct {
		name  string
		calls []call
		// later is how far the clock moves between the calls.
		later time.Duration
	}{
		{name: "a fresh signed call is accepted",
			calls: []call{{fresh, http.StatusAccepted, "open requested at", ""}}},
		{name: "the same call again is refused as a replay",
			calls: []call{{fresh, http.StatusAccepted, "", ""}, {fresh, http.StatusUnauthorized, "used before (a replayed call)", ""}}},
		{name: "a replay after the signature's window is refused as stale",
			calls: []call{{fresh, http.StatusAccepted, "", ""}, {fresh, http.StatusUnauthorized, "is 5m1s old, more than 5m0s", ""}},
			later: MaxSkew + time.Second},
		{name: "a call signed more than 5 minutes ago is refused",
			calls: []call{{signed(body, token, now.Add(-MaxSkew-time.Second).Unix()), http.StatusUnauthorized, "is 5m1s old, more than 5m0s", ""}}},
		{name: "a call signed 5 minutes ago is accepted",
			calls: []call{{signed(body, token, now.Add(-MaxSkew).Unix()), http.StatusAccepted, "", ""}}},
		{name: "a call signed more than 5 minutes ahead is refused",
			calls: []call{{signed(body, token, now.Add(MaxSkew+time.Second).Unix()), http.StatusUnauthorized, "5m1s ahead of the receiver's clock", ""}}},
		{name: "a signature sent with another timestamp is refused",
			calls: []call{{tampered, http.StatusUnauthorized, "X-Signature-256 does not match", ""}}},
		{name: "a signed call without a timestamp is refused",
			calls: []call{{map[string]string{"X-Signature-256": fresh["X-Signature-256"]}, http.StatusUnauthorized, "a signed call needs X-Signature-Timestamp", ""}}},
		{name: "a timestamp that is no Unix time is refused",
			calls: []call{{map[string]string{"X-Signature-256": fresh["X-Signature-256"], "X-Signature-Timestamp": now.Format(time.RFC3339)},
				http.StatusUnauthorized, "is not a Unix time in seconds", ""}}},
		{name: "another call signed in the same second is accepted",
			calls: []call{{fresh, http.StatusAccepted, "", ""}, {signed(`{"ticket":"CHG-2"}`, token, now.Unix()), http.StatusAccepted, "", `{"ticket":"CHG-2"}`}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(hookedGate(token)...).Build()
			clk := clocktesting.NewFakePassiveClock(now)
			rc := &Receiver{Client: c, Secrets: c, Recorder: record.NewFakeRecorder(10), Clock: clk}
			for i, call := range tc.calls {
				if i > 0 {
					clk.SetTime(clk.Now().Add(tc.later))
				}
				b := body
				if call.body != "" {
					b = call.body
				}
				req := httptest.NewRequest("POST", "/hooks/gates/ops/approval/open", strings.NewReader(b))
				for k, v := range call.headers {
					req.Header.Set(k, v)
				}
				w := httptest.NewRecorder()
				rc.ServeHTTP(w, req)
				if w.Code != call.wantStatus || !strings.Contains(w.Body.String(), call.wantBody) {
					t.Errorf("call %d: %d %q, want %d saying %q", i+1, w.Code, strings.TrimSpace(w.Body.String()), call.wantStatus, call.wantBody)
				}
			}
		})
	}
}

// After a restart or a change of leader the signatures accepted before are
// forgotten; a call signed before the receiver began serving is refused,
// so none of them can be replayed, and a call signed since is accepted.
func TestReceiverRefusesCallsSignedBeforeItBeganServing(t *testing.T) {
	const token, body = "s3cret", `{"ticket":"CHG-1"}`
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(hookedGate(token)...).Build()
	clk := clocktesting.NewFakePassiveClock(receiverNow)
	restarted := &Receiver{Client: c, Secrets: c, Recorder: record.NewFakeRecorder(10), Clock: clk, Since: receiverNow.Add(-10 * time.Second)}
	call := func(headers map[string]string) (int, string) {
		req := httptest.NewRequest("POST", "/hooks/gates/ops/approval/open", strings.NewReader(body))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		restarted.ServeHTTP(w, req)
		return w.Code, strings.TrimSpace(w.Body.String())
	}
	for _, before := range []time.Duration{-time.Minute, -10 * time.Second} {
		code, said := call(signed(body, token, receiverNow.Add(before).Unix()))
		if code != http.StatusUnauthorized || !strings.Contains(said, "when this receiver began serving") {
			t.Errorf("a call signed %s before now, the receiver serving since 10s ago: %d %q, want 401 saying it began serving since", -before, code, said)
		}
	}
	if code, said := call(signed(body, token, receiverNow.Add(-9*time.Second).Unix())); code != http.StatusAccepted {
		t.Errorf("a call signed after the receiver began serving: %d %q, want 202", code, said)
	}
	// A bearer token carries no time: it is not affected.
	if code, said := call(map[string]string{"Authorization": "Bearer " + token}); code != http.StatusAccepted {
		t.Errorf("a bearer call: %d %q, want 202", code, said)
	}
}

// A call that could not be written may be sent again as it was signed.
func TestReceiverForgetsTheSignatureOfAFailedCall(t *testing.T) {
	const token, body = "s3cret", `{}`
	fail := true
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(hookedGate(token)...).WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if fail {
			return errors.New("hub unavailable")
		}
		return cl.Patch(ctx, obj, patch, opts...)
	}}).Build()
	rc := &Receiver{Client: c, Secrets: c, Recorder: record.NewFakeRecorder(10), Clock: clocktesting.NewFakePassiveClock(receiverNow)}
	headers := signed(body, token, receiverNow.Unix())
	for _, want := range []int{http.StatusInternalServerError, http.StatusAccepted, http.StatusUnauthorized} {
		req := httptest.NewRequest("POST", "/hooks/gates/ops/approval/open", strings.NewReader(body))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, req)
		if w.Code != want {
			t.Errorf("%d %q, want %d", w.Code, strings.TrimSpace(w.Body.String()), want)
		}
		fail = false
	}
}

// The signatures remembered are bounded: past MaxSeenSignatures signed
// calls are refused rather than one forgotten early, and each is forgotten
// once its timestamp alone would refuse it.
func TestSeenSignaturesAreBoundedAndPrunedByAge(t *testing.T) {
	var s seenSignatures
	now := receiverNow
	for i := range MaxSeenSignatures {
		if got := s.claim(strconv.Itoa(i), now.Add(MaxSkew), now); got != claimOK {
			t.Fatalf("claim %d = %v", i, got)
		}
	}
	if got := s.claim("one more", now.Add(MaxSkew), now); got != claimFull {
		t.Errorf("claim past the bound = %v, want claimFull", got)
	}
	if got := s.claim("0", now.Add(MaxSkew), now); got != claimReplayed {
		t.Errorf("a remembered signature = %v, want claimReplayed", got)
	}
	later := now.Add(MaxSkew)
	if got := s.claim("one more", later.Add(MaxSkew), later); got != claimOK {
		t.Errorf("claim once the others are MaxSkew old = %v, want claimOK", got)
	}
	if len(s.until) != 1 {
		t.Errorf("%d signatures remembered, want only the last", len(s.until))
	}
	latest := later.Add(MaxSkew)
	if got := s.claim("another", latest.Add(MaxSkew), latest); got != claimOK || len(s.until) != 1 {
		t.Errorf("claim = %v with %d signatures remembered, want claimOK and the one past its time forgotten", got, len(s.until))
	}
}

// A signature is good for the one call it was made for: a captured close
// of one gate, sent as an open of it or to another gate whose spec.secretRef
// names the same Secret, is refused and changes nothing, and the close it
// was made for is still accepted afterwards.
func TestReceiverRefusesASignatureSentForAnotherCall(t *testing.T) {
	const token, body = "s3cret", `{"ticket":"CHG-1"}`
	const closeApproval = "/hooks/gates/ops/approval/close"
	captured := signedFor(closeApproval, body, token, receiverNow.Unix())
	cases := []struct {
		name string
		path string // where the captured call is sent
		gate string // the gate that path names, which must stay unchanged
	}{
		{"the close sent as an open of the same gate", "/hooks/gates/ops/approval/open", "approval"},
		{"the close sent to another gate with the same Secret", "/hooks/gates/ops/other/close", "other"},
		{"the close sent as an open of another gate with the same Secret", "/hooks/gates/ops/other/open", "other"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			other := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "other"},
				Spec: gatingv1alpha1.GateSpec{SecretRef: &corev1.LocalObjectReference{Name: "hook"}}}
			c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(append(hookedGate(token), other)...).Build()
			rec := record.NewFakeRecorder(10)
			rc := &Receiver{Client: c, Secrets: c, Recorder: rec, Clock: clocktesting.NewFakePassiveClock(receiverNow)}
			call := func(path string) (int, string) {
				req := httptest.NewRequest("POST", path, strings.NewReader(body))
				for k, v := range captured {
					req.Header.Set(k, v)
				}
				w := httptest.NewRecorder()
				rc.ServeHTTP(w, req)
				return w.Code, strings.TrimSpace(w.Body.String())
			}
			if code, said := call(tc.path); code != http.StatusUnauthorized || !strings.Contains(said, "X-Signature-256 does not match") {
				t.Errorf("POST %s signed for POST %s: %d %q, want 401 saying the signature does not match", tc.path, closeApproval, code, said)
			}
			g := &gatingv1alpha1.Gate{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: tc.gate}, g); err != nil {
				t.Fatal(err)
			}
			if len(g.Annotations) != 0 {
				t.Errorf("the refused call changed gate ops/%s: annotations %v", tc.gate, g.Annotations)
			}
			if events := fixture.Events(rec); len(events) != 0 {
				t.Errorf("the refused call sent events %q", events)
			}
			if code, said := call(closeApproval); code != http.StatusAccepted {
				t.Errorf("POST %s as signed, after the refused call: %d %q, want 202", closeApproval, code, said)
			}
		})
	}
}
