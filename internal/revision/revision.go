// Package revision owns what identifies a template's content for a
// Rollout: the content hash (what changes when the template's manifests
// would, and nothing else) and the stamp the rollout controller writes on a
// binding to say which revision took that content in. The rollout
// controller writes stamps; the binding controller reads them to decide
// the RolloutStage hold. Both need the same definition, so it lives here.
package revision

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/karmada-io/karmada/pkg/resourceinterpreter/default/native/prune"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federator-dev/federator/apis/keys"
)

// Hash identifies the content a template sends to members: the template
// without its status and the fields only the hub has (Karmada's prune),
// and without the annotations that are no new revision in apis/keys' table
// (suspending a template, gating it or setting its deletion delay is none).
func Hash(tpl *unstructured.Unstructured) (string, error) {
	m := tpl.DeepCopy()
	if err := prune.RemoveIrrelevantFields(m); err != nil {
		return "", fmt.Errorf("prune %s %s/%s: %w", tpl.GetKind(), tpl.GetNamespace(), tpl.GetName(), err)
	}
	delete(m.Object, "status")
	if a := m.GetAnnotations(); a != nil {
		for k := range a {
			if !keys.NewRevision(k) {
				delete(a, k)
			}
		}
		if len(a) == 0 {
			a = nil
		}
		m.SetAnnotations(a)
	}
	raw, err := json.Marshal(m.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8]), nil
}

// Stamp is what a binding's rollouts.federator.dev/revision annotation
// says: the Rollout (by UID) and its revision that took in the content
// with Hash, and, per cluster whose overrides render that content
// differently, the hash of what the cluster gets (Clusters; a cluster not
// listed gets the template as it is).
type Stamp struct {
	RolloutUID string
	Revision   int64
	Hash       string
	Clusters   map[string]string
}

// HashFor is the content hash the stamp says cluster gets.
func (s Stamp) HashFor(cluster string) string {
	if h, ok := s.Clusters[cluster]; ok {
		return h
	}
	return s.Hash
}

// String is the annotation's value: "uid/revision/hash", then
// "/cluster=hash,..." (sorted) when a cluster's overrides change what it
// gets.
func (s Stamp) String() string {
	out := s.RolloutUID + "/" + strconv.FormatInt(s.Revision, 10) + "/" + s.Hash
	if len(s.Clusters) == 0 {
		return out
	}
	pairs := make([]string, 0, len(s.Clusters))
	for c, h := range s.Clusters {
		pairs = append(pairs, c+"="+h)
	}
	slices.Sort(pairs)
	return out + "/" + strings.Join(pairs, ",")
}

// ParseStamp reads the annotation's value; ok is false when it cannot be
// read (then nothing is released on its strength).
func ParseStamp(v string) (Stamp, bool) {
	parts := strings.Split(v, "/")
	if len(parts) != 3 && len(parts) != 4 || parts[0] == "" || parts[2] == "" {
		return Stamp{}, false
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || n < 1 {
		return Stamp{}, false
	}
	s := Stamp{RolloutUID: parts[0], Revision: n, Hash: parts[2]}
	if len(parts) == 4 {
		s.Clusters = map[string]string{}
		for _, pair := range strings.Split(parts[3], ",") {
			c, h, ok := strings.Cut(pair, "=")
			if !ok || c == "" || h == "" {
				return Stamp{}, false
			}
			s.Clusters[c] = h
		}
	}
	return s, true
}
