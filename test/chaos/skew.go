package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/cmd/federator/cli"
	"github.com/federator-dev/federator/pkg/gatestate"
)

// The skew-clocks fault (issue 48): gate requests sent by callers whose
// clocks are off. A gate open or close is then sent, by a draw of its own
// seeded source, in one of three ways:
//
//   - as an annotation written by this program, on the hub's clock (what
//     every request is without the fault);
//   - by `federator gate open|close [--for D]`, run in this process on a
//     clock off by up to maxSkew either way (cli.CommandsOnClock);
//   - by the gate webhook, signed with a timestamp off by up to maxSkew
//     either way (the receiver refuses one more than gate.MaxSkew off, or
//     signed before it began serving: a refusal leaves the gate as it was).
//
// Whatever the caller's clock, a request comes into force when the hub
// stores it, and its --for counts from the hub's time: the model takes the
// times the hub stored only when they lie between the write's start (to
// the second: the CLI stamps with the hub's Date header) and its end, and
// otherwise the caller's intent (the request in force from when it was
// sent, flipping back --for after), so a request stamped by the caller's
// clock is judged by what the user asked for.

// maxSkew bounds how far a skewed caller's clock is off.
const maxSkew = 10 * time.Minute

// Callers of a gate request.
const (
	callerAnnotation = "" // this program, on the hub's clock
	callerCLI        = "cli"
	callerWebhook    = "webhook"
)

// gateTokenSecret holds the token the webhook's signed calls are keyed by;
// with skew-clocks every Gate names it in spec.secretRef.
const gateTokenSecret = "chaos-gate-token"

// gateCallers sends the gate requests of a run with skew-clocks.
type gateCallers struct {
	rng *rand.Rand
	// kubeconfig is the hub's, for the CLI.
	kubeconfig string
	// webhooks are the base URLs of the replicas' receivers; the leader's
	// answers, the others do not listen.
	webhooks []string
	token    []byte
	http     *http.Client
	// figures: requests by caller and refused webhook calls; offClock
	// says of each request the hub stored timed off its own clock (by the
	// caller's), a violation: a request comes into force when the hub
	// stores it, and its --for counts from the hub's time.
	byCaller map[string]int
	refused  int
	offClock []string
}

func newGateCallers(seed int64, kubeconfig string, webhooks []string) *gateCallers {
	return &gateCallers{rng: rand.New(rand.NewSource(seed ^ 0xc10c)), kubeconfig: kubeconfig, webhooks: webhooks,
		token: []byte(fmt.Sprintf("chaos-%d", seed)), http: &http.Client{Timeout: 10 * time.Second}, byCaller: map[string]int{}}
}

// draw chooses the caller of a gate request and its clock's skew. Drawn
// for every gate request of the operations, whether or not skew-clocks is
// on (c nil: the annotation, unskewed), so a seed's choices stay the same.
func (c *gateCallers) draw(o *op) {
	if c == nil {
		return
	}
	switch c.rng.Intn(3) {
	case 0:
		o.Caller = callerCLI
	case 1:
		// A webhook call has no --for.
		o.Caller, o.For = callerWebhook, 0
	}
	// Half of them a drift of seconds, which the webhook still takes (a
	// receiver refuses one more than gate.MaxSkew off), the rest up to
	// 5 and up to maxSkew minutes.
	bound := []time.Duration{30 * time.Second, 30 * time.Second, 5 * time.Minute, maxSkew}[c.rng.Intn(4)]
	o.Skew = (time.Duration(c.rng.Int63n(int64(2*bound))) - bound).Round(time.Second)
}

// secret is the Secret the gates' spec.secretRef names.
func (c *gateCallers) secret() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: gateTokenSecret},
		Data: map[string][]byte{"token": c.token}}
}

// refusal is a request the hub refused (a webhook call signed too far off
// its clock): the gate is as it was.
type refusal struct{ reason string }

func (r *refusal) Error() string { return "refused: " + r.reason }

// send makes the request o through its caller and puts what the hub
// stored into next (see the comment at the top).
func (c *gateCallers) send(ctx context.Context, hub client.Client, o op, next *state, sent *time.Time) error {
	open := o.Kind == opGateOpen
	*sent = time.Now()
	var err error
	switch o.Caller {
	case callerCLI:
		err = c.viaCLI(ctx, o, open)
	case callerWebhook:
		err = c.viaWebhook(ctx, o, open, sent)
	default:
		return fmt.Errorf("gate request by %q: not a skewed caller", o.Caller)
	}
	if err != nil {
		return err
	}
	done := time.Now()
	c.byCaller[o.Caller]++
	intent := next.Gates[o.Gate].request(open, *sent, o.For)
	g := &gatingv1alpha1.Gate{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: namespace, Name: o.Gate}, g); err != nil {
		return fmt.Errorf("read Gate %s back: %w", o.Gate, err)
	}
	stored, ok := storedRequest(g, open, *sent, done)
	logf("%s: the hub stored open=%s close=%s", o, orNone(g.Annotations[gatingv1alpha1.OpenRequestAnnotation]),
		orNone(g.Annotations[gatingv1alpha1.CloseRequestAnnotation]))
	if !ok {
		c.offClock = append(c.offClock, fmt.Sprintf("VIOLATION: %s: Gate %s/%s stored the request as open=%s close=%s, not timed by the hub's clock "+
			"(between the write's start, %s, and its end, %s): a request comes into force when the hub stores it, and its --for counts from the hub's time; "+
			"judged by what the user asked for",
			o, namespace, o.Gate, orNone(g.Annotations[gatingv1alpha1.OpenRequestAnnotation]), orNone(g.Annotations[gatingv1alpha1.CloseRequestAnnotation]),
			sent.UTC().Format(time.RFC3339Nano), done.UTC().Format(time.RFC3339Nano)))
		stored = intent
	}
	stored.Window, stored.Scheduled = intent.Window, intent.Scheduled
	next.Gates = maps.Clone(next.Gates)
	next.Gates[o.Gate] = stored
	return nil
}

// storedRequest reads the request annotations the hub stored for a request
// of this kind written between sent and done, false when the request's own
// time is not within them (to the second before sent).
func storedRequest(g *gatingv1alpha1.Gate, open bool, sent, done time.Time) (gateState, bool) {
	var s gateState
	for key, at := range map[string]*time.Time{gatingv1alpha1.OpenRequestAnnotation: &s.OpenAt, gatingv1alpha1.CloseRequestAnnotation: &s.CloseAt} {
		if v, ok := g.Annotations[key]; ok {
			t, err := gatestate.RequestTime(key, v)
			if err != nil {
				return s, false
			}
			*at = t
		}
	}
	this := s.OpenAt
	if !open {
		this = s.CloseAt
	}
	return s, !this.IsZero() && !this.Before(sent.Truncate(time.Second)) && !this.After(done)
}

// viaCLI runs `federator gate open|close NAME -n NAMESPACE [--for D]` in
// this process, on a clock o.Skew off.
func (c *gateCallers) viaCLI(ctx context.Context, o op, open bool) error {
	action := gatingv1alpha1.ActionClose
	if open {
		action = gatingv1alpha1.ActionOpen
	}
	args := []string{"gate", action, o.Gate, "-n", namespace, "--kubeconfig", c.kubeconfig}
	if o.For > 0 {
		args = append(args, "--for", o.For.String())
	}
	skew := o.Skew
	root := &cobra.Command{Use: "federator", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(cli.CommandsOnClock(func() time.Time { return time.Now().Add(skew) })...)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		return fmt.Errorf("federator %s: %w (output: %s)", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// viaWebhook signs and sends the call to the replica that serves it (the
// leader), on a clock o.Skew off, retrying while none answers (a leader
// being chosen) or the gate is not yet in the receiver's cache.
func (c *gateCallers) viaWebhook(ctx context.Context, o op, open bool, sent *time.Time) error {
	action := gatingv1alpha1.ActionClose
	if open {
		action = gatingv1alpha1.ActionOpen
	}
	path := "/hooks/gates/" + namespace + "/" + o.Gate + "/" + action
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		for _, base := range c.webhooks {
			*sent = time.Now()
			status, body, err := c.call(ctx, base+path, path, time.Now().Add(o.Skew))
			switch {
			case err != nil:
				last = err.Error()
				continue // not the leader, or down
			case status == http.StatusAccepted:
				return nil
			case status == http.StatusUnauthorized:
				return &refusal{reason: strings.TrimSpace(body)}
			}
			last = fmt.Sprintf("%d %s", status, strings.TrimSpace(body))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("gate webhook %s: no receiver took the call within 30 s; last: %s", path, last)
}

// call POSTs an empty body to url signed as at, as docs/guides/approvals-and-windows.md says.
func (c *gateCallers) call(ctx context.Context, url, path string, at time.Time) (int, string, error) {
	timestamp := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, c.token)
	mac.Write([]byte(timestamp + ".POST." + path + "."))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(nil))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("X-Signature-Timestamp", timestamp)
	req.Header.Set("X-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(body), nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
