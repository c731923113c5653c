package gate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/policy/gating/v1alpha1"
)

// Receiver serves the webhook that opens and closes gates:
//
//	POST /hooks/gates/{namespace}/{name}/open
//	POST /hooks/gates/{namespace}/{name}/close
//
// A call is authenticated against the `token` key of the Secret the gate's
// spec.secretRef names, either as `Authorization: Bearer <token>` or as
// `X-Signature-256: sha256=<hex HMAC-SHA256 of the body keyed by the
// token>`, compared in constant time. Answers: 202 accepted (the request
// annotation is written; the gate controller does the rest), 401 without
// credentials or with wrong ones, 404 for a gate that does not exist or has
// no secretRef (asked only once credentials are given, so a caller without
// any learns nothing of which gates exist), 405 for another method or
// action, 413 for a body over MaxBody.
type Receiver struct {
	Client client.Client // reads and patches Gates
	// Secrets reads the gates' Secrets uncached: the controller does not
	// hold the hub's Secrets in memory.
	Secrets  client.Reader
	Recorder record.EventRecorder
	Clock    clock.PassiveClock
}

// MaxBody bounds the body a call may send.
const MaxBody = 64 << 10

// SignatureHeader carries the body's HMAC-SHA256 signature.
const SignatureHeader = "X-Signature-256"

const hooksPrefix = "/hooks/gates/"

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	parts := strings.Split(strings.TrimPrefix(req.URL.Path, hooksPrefix), "/")
	if !strings.HasPrefix(req.URL.Path, hooksPrefix) || len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		http.NotFound(w, req)
		return
	}
	ns, name, action := parts[0], parts[1], parts[2]
	if req.Method != http.MethodPost || (action != gatingv1alpha1.ActionOpen && action != gatingv1alpha1.ActionClose) {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST .../open or .../close", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("body over %d bytes", MaxBody), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	bearer, hasBearer := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	signature, hasSignature := strings.CutPrefix(req.Header.Get(SignatureHeader), "sha256=")
	if !hasBearer && !hasSignature {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}

	ctx := req.Context()
	g := &gatingv1alpha1.Gate{}
	if err := rc.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, g); err != nil {
		rc.notFoundOrError(w, req, err)
		return
	}
	if g.Spec.SecretRef == nil {
		http.NotFound(w, req)
		return
	}
	secret := &corev1.Secret{}
	if err := rc.Secrets.Get(ctx, client.ObjectKey{Namespace: ns, Name: g.Spec.SecretRef.Name}, secret); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "gate webhook: the gate's spec.secretRef cannot be read; refusing", "gate", ns+"/"+name)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	token := secret.Data["token"]
	if len(token) == 0 || !(hasBearer && subtle.ConstantTimeCompare([]byte(bearer), token) == 1 ||
		hasSignature && validSignature(body, token, signature)) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}

	key := gatingv1alpha1.OpenRequestAnnotation
	if action == gatingv1alpha1.ActionClose {
		key = gatingv1alpha1.CloseRequestAnnotation
	}
	now := rc.Clock.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, now)
	if err := rc.Client.Patch(ctx, g, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		rc.notFoundOrError(w, req, err)
		return
	}
	rc.Recorder.Eventf(g, corev1.EventTypeNormal, gatingv1alpha1.EventReasonWebhookRequest,
		"%s requested at %s by a webhook call from %s", action, now, remoteHost(req))
	w.WriteHeader(http.StatusAccepted)
	_, _ = fmt.Fprintf(w, "%s requested at %s\n", action, now)
}

func (rc *Receiver) notFoundOrError(w http.ResponseWriter, req *http.Request, err error) {
	if apierrors.IsNotFound(err) {
		http.NotFound(w, req)
		return
	}
	ctrl.LoggerFrom(req.Context()).Error(err, "gate webhook", "path", req.URL.Path)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

func validSignature(body, key []byte, signature string) bool {
	want, err := hex.DecodeString(strings.TrimSpace(signature))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return hmac.Equal(mac.Sum(nil), want)
}

func remoteHost(req *http.Request) string {
	if host, _, err := net.SplitHostPort(req.RemoteAddr); err == nil {
		return host
	}
	return req.RemoteAddr
}

// Serve runs the receiver on addr until ctx ends; it is a manager runnable.
type Serve struct {
	Addr     string
	Receiver *Receiver
}

// Start listens and serves until ctx is done, then shuts down.
func (s Serve) Start(ctx context.Context) error {
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("--webhook-bind-address %s: %w", s.Addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(hooksPrefix, s.Receiver)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctrl.Log.WithName("gate-webhook").Info("serving gate webhooks", "address", l.Addr().String())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}
