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
	"maps"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/internal/httpserve"
)

// Receiver serves the webhook that opens and closes gates:
//
//	POST /hooks/gates/{namespace}/{name}/open
//	POST /hooks/gates/{namespace}/{name}/close
//
// A call is authenticated against the `token` key of the Secret the gate's
// spec.secretRef names, either as `Authorization: Bearer <token>` or signed:
// `X-Signature-Timestamp: <unix seconds>` and `X-Signature-256:
// sha256=<hex HMAC-SHA256 of "<timestamp>.<method>.<path>.<body>" keyed by
// the token>` (see signedText), compared in constant time. The method and path
// are signed because the path names the gate and the action: a captured
// close is then no open, nor a call to another gate whose secretRef names
// the same Secret. A signed call is refused when its timestamp is
// more than MaxSkew from the receiver's clock, or when its signature was
// accepted before (a replay): signatures are remembered until their
// timestamp is too old to pass, and calls signed before the receiver began
// serving are refused. Answers: 202 accepted (the request
// annotation is written; the gate controller does the rest), 401 without
// credentials, with wrong ones, stale or replayed (the body says which),
// 404 for a gate that does not exist or has no secretRef (asked only once
// credentials are given, so a caller without any learns nothing of which
// gates exist), 405 for another method or action, 413 for a body over
// MaxBody, 429 when more than MaxSeenSignatures signed calls came within
// MaxSkew.
type Receiver struct {
	Client client.Client // reads and patches Gates
	// Secrets reads the gates' Secrets uncached: the controller does not
	// hold the hub's Secrets in memory.
	Secrets  client.Reader
	Recorder record.EventRecorder
	Clock    clock.PassiveClock

	// Since is when this receiver began serving (Serve sets it). A signed
	// call stamped at or before that second is refused: the signatures
	// remembered below are in memory, so after a restart or a change of
	// leader a call of the last MaxSkew could otherwise be replayed, and an
	// "open" replayed after a "close" would open the gate again.
	Since time.Time

	// seen holds the signatures accepted within MaxSkew. In memory: the
	// receiver runs in the leader only; Since covers what a restart forgets.
	seen seenSignatures
}

// MaxBody bounds the body a call may send.
const MaxBody = 64 << 10

// SignatureHeader carries the HMAC-SHA256 signature of signedText.
const SignatureHeader = "X-Signature-256"

// TimestampHeader carries when a signed call was made, in Unix seconds; it
// is part of what is signed.
const TimestampHeader = "X-Signature-Timestamp"

// MaxSkew is how far a signed call's timestamp may be from the receiver's
// clock, either way; a signature is remembered (and refused again) as long.
const MaxSkew = 5 * time.Minute

// MaxSeenSignatures bounds the signatures remembered: past it, signed calls
// are refused (429) until the oldest are MaxSkew old, rather than
// forgetting one that could then be replayed.
const MaxSeenSignatures = 10000

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
		http.Error(w, "unauthorized: send Authorization: Bearer <token>, or sign the call ("+SignatureHeader+" and "+TimestampHeader+")",
			http.StatusUnauthorized)
		return
	}
	now := rc.Clock.Now()
	var signedAt time.Time
	if hasSignature && !hasBearer {
		var problem string
		if signedAt, problem = signatureTime(req.Header.Get(TimestampHeader), now); problem != "" {
			http.Error(w, "unauthorized: "+problem, http.StatusUnauthorized)
			return
		}
		if !rc.Since.IsZero() && !signedAt.After(rc.Since.Truncate(time.Second)) {
			http.Error(w, fmt.Sprintf("unauthorized: %s %s is not after %s, when this receiver began serving (a restart or a change of leader: calls signed before it are refused, as they could be replays): sign the call again, with the time of the call",
				TimestampHeader, req.Header.Get(TimestampHeader), rc.Since.UTC().Format(time.RFC3339)), http.StatusUnauthorized)
			return
		}
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
	var usedSignature string // the signature this call used up
	switch {
	case len(token) == 0:
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	case hasBearer:
		if subtle.ConstantTimeCompare([]byte(bearer), token) != 1 {
			http.Error(w, "unauthorized: wrong bearer token", http.StatusUnauthorized)
			return
		}
	default:
		mac, ok := signatureOf(signature)
		if !ok || !hmac.Equal(mac, sign(token, signedText(req.Header.Get(TimestampHeader), req.Method, callPath(ns, name, action), body))) {
			http.Error(w, fmt.Sprintf("unauthorized: %s does not match: sign \"<%s>.%s.%s.<body>\" with HMAC-SHA256 keyed by the token (the method and path of this call: a signature is good for one gate and action only)",
				SignatureHeader, TimestampHeader, req.Method, callPath(ns, name, action)), http.StatusUnauthorized)
			return
		}
		switch rc.seen.claim(string(mac), signedAt.Add(MaxSkew), now) {
		case claimReplayed:
			http.Error(w, "unauthorized: this signature was used before (a replayed call): sign each call afresh, with the time of the call",
				http.StatusUnauthorized)
			return
		case claimFull:
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("more than %d signed calls within %s: retry later", MaxSeenSignatures, MaxSkew),
				http.StatusTooManyRequests)
			return
		}
		usedSignature = string(mac)
	}

	key, opposite := gatingv1alpha1.OpenRequestAnnotation, gatingv1alpha1.CloseRequestAnnotation
	if action == gatingv1alpha1.ActionClose {
		key, opposite = opposite, key
	}
	// The receiver's clock is the hub's; a signed call's timestamp is the
	// caller's and only authenticates the call.
	at := now.UTC().Format(time.RFC3339Nano)
	if err := rc.request(ctx, g, key, opposite, at); err != nil {
		// A call that changed nothing may be sent again as it is.
		rc.seen.forget(usedSignature)
		rc.notFoundOrError(w, req, err)
		return
	}
	rc.Recorder.Eventf(g, corev1.EventTypeNormal, gatingv1alpha1.EventReasonWebhookRequest,
		"%s requested at %s by a webhook call from %s", action, at, remoteHost(req))
	w.WriteHeader(http.StatusAccepted)
	_, _ = fmt.Fprintf(w, "%s requested at %s\n", action, at)
}

// conflictBackoff paces the retries of a request write that lost a race:
// the Gate is read again from the cache, which may lag the write that won.
var conflictBackoff = wait.Backoff{Steps: 8, Duration: 20 * time.Millisecond, Factor: 2, Jitter: 0.1}

// request writes the request annotation key = at on g and removes the
// opposite request, in one write locked to g's resourceVersion: the
// request in force is then the one the hub stored last, whatever a request
// written before says of its own time (a laptop's clock ahead). A write
// that loses a race is made again on the gate as it is now.
func (rc *Receiver) request(ctx context.Context, g *gatingv1alpha1.Gate, key, opposite, at string) error {
	return retry.OnError(conflictBackoff, apierrors.IsConflict, func() error {
		before := g.DeepCopy()
		g.Annotations = maps.Clone(g.Annotations)
		if g.Annotations == nil {
			g.Annotations = map[string]string{}
		}
		g.Annotations[key] = at
		delete(g.Annotations, opposite)
		err := rc.Client.Patch(ctx, g, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			if err := rc.Client.Get(ctx, client.ObjectKeyFromObject(before), g); err != nil {
				return err
			}
		}
		return err
	})
}

func (rc *Receiver) notFoundOrError(w http.ResponseWriter, req *http.Request, err error) {
	if apierrors.IsNotFound(err) {
		http.NotFound(w, req)
		return
	}
	ctrl.LoggerFrom(req.Context()).Error(err, "gate webhook", "path", req.URL.Path)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

// signatureTime reads a signed call's timestamp and says what is wrong
// with it: missing, unreadable, or more than MaxSkew from now.
func signatureTime(value string, now time.Time) (time.Time, string) {
	if value == "" {
		return time.Time{}, fmt.Sprintf("a signed call needs %s: the Unix time of the call in seconds (date +%%s), signed with the method, path and body", TimestampHeader)
	}
	secs, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Sprintf("%s %q is not a Unix time in seconds (date +%%s)", TimestampHeader, value)
	}
	at := time.Unix(secs, 0)
	// Compared as instants, not by their difference: one of more than 292
	// years saturates time.Duration, and the negation of the most negative
	// Duration is itself, which let any timestamp past 2318 through. The
	// seconds are compared first, as time.Unix wraps near the int64 limit.
	switch {
	case secs > now.Unix()+int64(MaxSkew/time.Second) || at.After(now.Add(MaxSkew)):
		return at, fmt.Sprintf("%s %s is %s ahead of the receiver's clock, more than %s: check the caller's clock",
			TimestampHeader, value, span(at, now), MaxSkew)
	case at.Before(now.Add(-MaxSkew)):
		return at, fmt.Sprintf("%s %s is %s old, more than %s: sign each call afresh, with the time of the call",
			TimestampHeader, value, span(now, at), MaxSkew)
	}
	return at, ""
}

// span is how much later is than earlier, to the second, or "over 292
// years" where a time.Duration cannot say.
func span(later, earlier time.Time) string {
	if d := later.Sub(earlier); d >= 0 && d < math.MaxInt64 {
		return d.Round(time.Second).String()
	}
	return "over 292 years"
}

// signatureOf decodes the hex of an X-Signature-256 value.
func signatureOf(value string) ([]byte, bool) {
	mac, err := hex.DecodeString(strings.TrimSpace(value))
	return mac, err == nil && len(mac) == sha256.Size
}

// signedText is what a signed call signs: "<timestamp>.<method>.<path>.<body>",
// the X-Signature-Timestamp value as sent, the method (POST), the request
// path as the receiver serves it (/hooks/gates/<namespace>/<name>/<open or
// close>, no query) and the body as sent, joined by dots. The path names the
// gate and the action, so a signature is good for that one call only.
func signedText(timestamp, method, path string, body []byte) []byte {
	s := make([]byte, 0, len(timestamp)+len(method)+len(path)+len(body)+3)
	s = append(s, timestamp...)
	s = append(s, '.')
	s = append(s, method...)
	s = append(s, '.')
	s = append(s, path...)
	s = append(s, '.')
	return append(s, body...)
}

// callPath is the path of the call that opens or closes gate namespace/name.
func callPath(namespace, name, action string) string {
	return hooksPrefix + namespace + "/" + name + "/" + action
}

// sign is the HMAC-SHA256 of signed keyed by key.
func sign(key, signed []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write(signed)
	return mac.Sum(nil)
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
	s.Receiver.Since = s.Receiver.Clock.Now()
	mux := http.NewServeMux()
	mux.Handle(hooksPrefix, s.Receiver)
	ctrl.Log.WithName("gate-webhook").Info("serving gate webhooks", "address", l.Addr().String())
	return httpserve.Serve(ctx, l, mux, 5*time.Second)
}
