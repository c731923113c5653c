package gate

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/pkg/gatestate"
)

// A webhook call replaces the opposite request: the request in force is
// the one the hub stored last, stamped with the receiver's clock (the
// hub's), whatever a request written before says of its own time or a
// signed call of its.
func TestReceiverRequestReplacesTheOpposite(t *testing.T) {
	const token, body = "s3cret", `{"ticket":"CHG-1"}`
	bearer := map[string]string{"Authorization": "Bearer " + token}
	ahead := receiverNow.Add(time.Minute).Format(time.RFC3339)
	for _, tc := range []struct {
		name    string
		before  map[string]string
		action  string
		headers map[string]string
		want    map[string]string
		// The gate's state at these times after the call.
		openAt, closedAt []time.Time
	}{
		{name: "a close replaces an open stamped ahead of the hub (a laptop's fast clock)",
			before: map[string]string{gatingv1alpha1.OpenRequestAnnotation: ahead}, action: "close", headers: bearer,
			want:     map[string]string{gatingv1alpha1.CloseRequestAnnotation: "2026-11-23T12:00:00Z"},
			closedAt: []time.Time{receiverNow, receiverNow.Add(2 * time.Minute)}},
		{name: "an open replaces a close stamped ahead of the hub",
			before: map[string]string{gatingv1alpha1.CloseRequestAnnotation: ahead}, action: "open", headers: bearer,
			want:   map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T12:00:00Z"},
			openAt: []time.Time{receiverNow, receiverNow.Add(2 * time.Minute)}},
		{name: "a signed call is stamped with the receiver's clock, not its signature's timestamp",
			action: "close", headers: signedFor("/hooks/gates/ops/approval/close", body, token, receiverNow.Add(-2*time.Minute).Unix()),
			want:     map[string]string{gatingv1alpha1.CloseRequestAnnotation: "2026-11-23T12:00:00Z"},
			closedAt: []time.Time{receiverNow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := hookedGate(token)
			objs[0].SetAnnotations(tc.before)
			c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(objs...).Build()
			rc := &Receiver{Client: c, Secrets: c, Recorder: record.NewFakeRecorder(10), Clock: clocktesting.NewFakePassiveClock(receiverNow)}
			if w := call(rc, tc.action, body, tc.headers); w.Code != http.StatusAccepted {
				t.Fatalf("%d %q, want 202", w.Code, strings.TrimSpace(w.Body.String()))
			}
			g := &gatingv1alpha1.Gate{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: "approval"}, g); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(g.Annotations, tc.want) {
				t.Errorf("annotations = %v, want %v", g.Annotations, tc.want)
			}
			for want, times := range map[bool][]time.Time{true: tc.openAt, false: tc.closedAt} {
				for _, at := range times {
					if e := gatestate.At(g, at); e.Open != want {
						t.Errorf("at %s the gate is open=%v (%s), want open=%v", at.Format(time.RFC3339), e.Open, e.Message, want)
					}
				}
			}
		})
	}
}

// A call whose write loses a race with another (the Gate's resourceVersion
// changed since it was read) is written again on the Gate as it is now.
func TestReceiverRetriesAConflict(t *testing.T) {
	const token = "s3cret"
	conflicts := 0
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(hookedGate(token)...).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if conflicts == 0 {
				conflicts++
				return apierrors.NewConflict(schema.GroupResource{Group: "gating.federator.dev", Resource: "gates"}, obj.GetName(),
					errors.New("the object has been modified"))
			}
			return cl.Patch(ctx, obj, patch, opts...)
		}}).Build()
	rc := &Receiver{Client: c, Secrets: c, Recorder: record.NewFakeRecorder(10), Clock: clocktesting.NewFakePassiveClock(receiverNow)}
	if w := call(rc, "close", "", map[string]string{"Authorization": "Bearer " + token}); w.Code != http.StatusAccepted {
		t.Fatalf("%d %q, want 202: a conflict is retried", w.Code, strings.TrimSpace(w.Body.String()))
	}
}

// call posts body to the gate ops/approval's action hook with headers.
func call(rc *Receiver, action, body string, headers map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/hooks/gates/ops/approval/"+action, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, req)
	return w
}
