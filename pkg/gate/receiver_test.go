package gate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	gatingv1alpha1 "github.com/federator-dev/federator/apis/policy/gating/v1alpha1"
	"github.com/federator-dev/federator/internal/fixture"
)

func sign(body, key string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

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
			map[string]string{"X-Signature-256": sign(`{"why":"incident"}`, token)}, http.StatusAccepted, gatingv1alpha1.CloseRequestAnnotation},
		{"a signature of another body is refused", "POST", "/hooks/gates/ops/approval/open", `{"a":1}`,
			map[string]string{"X-Signature-256": sign(`{"a":2}`, token)}, http.StatusUnauthorized, ""},
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
			c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(
				&gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "approval"},
					Spec: gatingv1alpha1.GateSpec{SecretRef: &corev1.LocalObjectReference{Name: "hook"}}},
				&gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "plain"}},
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "hook"}, Data: map[string][]byte{"token": []byte(token)}},
			).Build()
			rec := record.NewFakeRecorder(10)
			rc := &Receiver{Client: c, Secrets: c, Recorder: rec, Clock: clocktesting.NewFakePassiveClock(at("2026-11-23T12:00:00Z"))}
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
