package gate

import (
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fuzztest"
)

// FuzzSignatureTime: X-Signature-Timestamp. A timestamp is accepted only
// as Unix seconds within MaxSkew of the receiver's clock, either way; a
// refusal names the header and says what to send.
func FuzzSignatureTime(f *testing.F) {
	for _, seed := range []string{"1795435200", " 1795435200 ", "", "2026-11-23T12:00:00Z", "+1795435200", "-1", "0",
		"1795435501", "1795434899", "9223372036854775807", "-9223372036854775808", "99999999999999999999", "1e9"} {
		f.Add(seed, int64(0))
	}
	f.Fuzz(func(t *testing.T, value string, nowOffset int64) {
		now := receiverNow.Add(time.Duration(nowOffset % int64(100*365*24*time.Hour)))
		at, problem := signatureTime(value, now)
		if problem != "" {
			fuzztest.Explains(t, problem, TimestampHeader)
			return
		}
		if at.Before(now.Add(-MaxSkew)) || at.After(now.Add(MaxSkew)) {
			t.Fatalf("%s %q accepted as %s, more than %s from the receiver's clock %s", TimestampHeader, value, at, MaxSkew, now)
		}
		if secs, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err != nil || secs != at.Unix() {
			t.Fatalf("%s %q accepted as %s, which is not the Unix time it says", TimestampHeader, value, at)
		}
	})
}

var fuzzScheme = policy.NewScheme()

// FuzzWebhookCall: a call to the gate webhook with any body and any
// credentials. It opens the gate only with the gate's token as bearer, or
// with the HMAC-SHA256 of "<timestamp>.POST.<path>.<body>" keyed by the
// token and a timestamp within MaxSkew, and then only once; a correctly
// signed, timely call is accepted. A refused call writes nothing and says
// why.
func FuzzWebhookCall(f *testing.F) {
	const token = "s3cret"
	now := strconv.FormatInt(receiverNow.Unix(), 10)
	f.Add([]byte(`{"why":"incident"}`), now, "", "", true)
	f.Add([]byte(`{"why":"incident"}`), now, "00", "", false)
	f.Add([]byte(""), now, "", "Bearer "+token, false)
	f.Add([]byte("x"), now, "", "Bearer guess", true)
	f.Add([]byte("x"), " "+now+" ", "", "", true)
	f.Add([]byte("x"), now, strings.Repeat("ab", 32), "", false)
	f.Add([]byte("x"), "", "", "", true)
	f.Add([]byte("x"), "1795435501", "", "", true)
	f.Add([]byte("x"), now, "", "bearer "+token, true)
	f.Fuzz(func(t *testing.T, body []byte, timestamp, signature, authorization string, signRight bool) {
		if len(body) > MaxBody {
			body = body[:MaxBody]
		}
		c := fake.NewClientBuilder().WithScheme(fuzzScheme).WithObjects(hookedGate(token)...).Build()
		rc := &Receiver{Client: c, Secrets: c, Recorder: record.NewFakeRecorder(10), Clock: clocktesting.NewFakePassiveClock(receiverNow)}
		rightMAC := sign([]byte(token), signedText(timestamp, "POST", "/hooks/gates/ops/approval/open", body))
		if signRight {
			signature = hex.EncodeToString(rightMAC)
		}
		call := func() *httptest.ResponseRecorder {
			req := httptest.NewRequest("POST", "/hooks/gates/ops/approval/open", strings.NewReader(string(body)))
			req.Header.Set(TimestampHeader, timestamp)
			req.Header.Set(SignatureHeader, "sha256="+signature)
			if authorization != "" {
				req.Header.Set("Authorization", authorization)
			}
			w := httptest.NewRecorder()
			rc.ServeHTTP(w, req)
			return w
		}
		w := call()
		g := &gatingv1alpha1.Gate{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: "approval"}, g); err != nil {
			t.Fatal(err)
		}
		bearer, hasBearer := strings.CutPrefix(authorization, "Bearer ")
		mac, macOK := signatureOf(signature)
		timely := false // judged here, not by signatureTime
		if secs, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64); err == nil && secs > -1<<40 && secs < 1<<40 {
			at := time.Unix(secs, 0)
			timely = !at.Before(receiverNow.Add(-MaxSkew)) && !at.After(receiverNow.Add(MaxSkew))
		}
		signedRight := !hasBearer && macOK && string(mac) == string(rightMAC) && timely
		if w.Code != http.StatusAccepted {
			if len(g.Annotations) != 0 {
				t.Fatalf("refused call (%d) wrote %v", w.Code, g.Annotations)
			}
			fuzztest.Explains(t, w.Body.String())
			if signedRight {
				t.Fatalf("a correctly signed call at %q was refused: %d %s", timestamp, w.Code, w.Body.String())
			}
			return
		}
		if !(hasBearer && bearer == token) && !signedRight {
			t.Fatalf("call accepted without the token or a right, timely signature: Authorization %q, %s %q, %s %q",
				authorization, SignatureHeader, signature, TimestampHeader, timestamp)
		}
		if g.Annotations[gatingv1alpha1.OpenRequestAnnotation] != receiverNow.UTC().Format(time.RFC3339Nano) {
			t.Fatalf("accepted call wrote %v, want the open request at the call's time", g.Annotations)
		}
		if !hasBearer {
			if again := call(); again.Code != http.StatusUnauthorized || !strings.Contains(again.Body.String(), "used before") {
				t.Fatalf("the same signed call again: %d %s, want it refused as a replay", again.Code, again.Body.String())
			}
		}
	})
}
