package hubinstall

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

// Issue 70, item 12: a Gate request written by hand while the opposite
// one stays is refused when its stamp is earlier (it would be ignored: the
// requests are in force newest first by stamp), and so is a request that
// is not an RFC 3339 time. Written together, written later, or replacing
// the opposite request, it is accepted.
func TestInstallRefusesGateRequestsTheGateWouldIgnore(t *testing.T) {
	ctx, c := bareHub(t)
	if _, err := Install(ctx, c); err != nil {
		t.Fatalf("Install: %v", err)
	}
	const open, closeKey = gatingv1alpha1.OpenRequestAnnotation, gatingv1alpha1.CloseRequestAnnotation
	const t0, before, after = "2026-12-07T10:10:00Z", "2026-12-07T10:00:00Z", "2026-12-07T11:20:00+01:00"
	for _, tc := range []struct {
		name    string
		stored  map[string]string
		write   map[string]string // "" removes
		refusal string            // "" accepted
	}{
		{name: "a close stamped before the open it follows, the open left", stored: map[string]string{open: t0},
			write:   map[string]string{closeKey: before},
			refusal: `metadata.annotations[` + closeKey + `]: Invalid value: "` + before + `": earlier than ` + open + ` "` + t0 + `"`},
		{name: "an open stamped before the close it follows, the close left", stored: map[string]string{closeKey: t0},
			write:   map[string]string{open: before},
			refusal: `remove it in the same write (kubectl annotate gate g ` + open + `=<now> ` + closeKey + `-), or use federator gate open g`},
		{name: "a close stamped before the open, which it removes", stored: map[string]string{open: t0},
			write: map[string]string{closeKey: before, open: ""}},
		{name: "a close stamped after the open", stored: map[string]string{open: t0},
			write: map[string]string{closeKey: "2026-12-07T10:11:00.5Z"}},
		{name: "a close with an offset, after the open", stored: map[string]string{open: t0},
			write: map[string]string{closeKey: after}},
		{name: "both written together, as gate open --for does", stored: map[string]string{},
			write: map[string]string{open: t0, closeKey: before}},
		{name: "the only request", stored: map[string]string{},
			write: map[string]string{closeKey: before}},
		{name: "not an RFC 3339 time", stored: map[string]string{},
			write:   map[string]string{open: "now"},
			refusal: `Gate default/g: metadata.annotations[` + open + `]: Invalid value: "now": a gate request is the time of the request, an RFC 3339 time`},
		{name: "a date without a time", stored: map[string]string{open: t0},
			write:   map[string]string{closeKey: "2026-12-07"},
			refusal: `Invalid value: "2026-12-07"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "g", Annotations: tc.stored}}
			if err := c.Create(ctx, g); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Delete(ctx, g) }()
			if g.Annotations == nil {
				g.Annotations = map[string]string{}
			}
			for k, v := range tc.write {
				if v == "" {
					delete(g.Annotations, k)
				} else {
					g.Annotations[k] = v
				}
			}
			err := c.Update(ctx, g, client.DryRunAll)
			switch {
			case tc.refusal == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
				t.Errorf("got %v, want a refusal saying %q", err, tc.refusal)
			}
		})
	}

	// A request stored before is not refused again when something else
	// of the gate changes.
	g := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "stored"}}
	if err := c.Create(ctx, g); err != nil {
		t.Fatal(err)
	}
	g.Spec.Default = gatingv1alpha1.Opened
	if err := c.Update(ctx, g); err != nil {
		t.Errorf("a gate without requests: %v", err)
	}
}
