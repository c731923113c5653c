package cli

import (
	"encoding/json"
	"fmt"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// What suspend and resume write: the suspension annotations they set or
// remove, as a merge patch, and how each change is told.

// annotationChange is what suspend or resume does to one suspension
// annotation of one object.
type annotationChange struct {
	key string
	// cluster is "" for the every-cluster annotation.
	cluster string
	// before and after are the annotation's value; nil when absent.
	before, after *string
}

func (c annotationChange) writes() bool {
	if c.before == nil || c.after == nil {
		return c.before != c.after
	}
	return *c.before != *c.after
}

func (c annotationChange) scope() string {
	if c.cluster == "" {
		return "every cluster"
	}
	return "cluster " + c.cluster
}

// describe says, for a person, what the change did to obj.
func (c annotationChange) describe(obj ref) string {
	switch {
	case c.after != nil && c.before == nil:
		return fmt.Sprintf("%s: suspended on %s%s", obj, c.scope(), quotedReason(*c.after))
	case c.after != nil && !c.writes():
		return fmt.Sprintf("%s: already suspended on %s%s; nothing changed", obj, c.scope(), quotedReason(*c.after))
	case c.after != nil:
		return fmt.Sprintf("%s: already suspended on %s; reason updated from %s to %s", obj, c.scope(),
			reasonText(*c.before), reasonText(*c.after))
	case c.before == nil:
		return fmt.Sprintf("%s: not suspended on %s by annotation %s; nothing to resume", obj, c.scope(), c.key)
	}
	return fmt.Sprintf("%s: suspension on %s lifted: annotation %s removed (reason was %s)", obj, c.scope(), c.key, reasonText(*c.before))
}

// quotedReason is " (\"reason\")", or "" when none was given.
func quotedReason(value string) string {
	if value == "true" {
		return ""
	}
	return fmt.Sprintf(" (%q)", value)
}

func reasonText(value string) string {
	if value == "true" {
		return "none given"
	}
	return fmt.Sprintf("%q", value)
}

// suspensionKeys are the annotations that hold every cluster (none given)
// or the named ones.
func suspensionKeys(clusters []string) (keys, scopes []string) {
	if len(clusters) == 0 {
		return []string{policykeys.SuspendedAnnotation}, []string{""}
	}
	for _, c := range clusters {
		keys = append(keys, policykeys.ClusterSuspendedAnnotationPrefix+c)
		scopes = append(scopes, c)
	}
	return keys, scopes
}

// suspendChanges sets the suspension annotations clusters call for to
// reason ("true" when none: the hub reads the value as the reason).
func suspendChanges(annotations map[string]string, clusters []string, reason string) []annotationChange {
	value := reason
	if value == "" {
		value = "true"
	}
	return changes(annotations, clusters, &value)
}

// resumeChanges removes the suspension annotations clusters call for.
func resumeChanges(annotations map[string]string, clusters []string) []annotationChange {
	return changes(annotations, clusters, nil)
}

func changes(annotations map[string]string, clusters []string, after *string) []annotationChange {
	keys, scopes := suspensionKeys(clusters)
	out := make([]annotationChange, 0, len(keys))
	for i, key := range keys {
		c := annotationChange{key: key, cluster: scopes[i], after: after}
		if v, ok := annotations[key]; ok {
			c.before = &v
		}
		out = append(out, c)
	}
	return out
}

// mergePatch is the JSON merge patch of the changes that write; nil when
// none does, so nothing is sent.
func mergePatch(changes []annotationChange) []byte {
	annotations := map[string]*string{}
	for _, c := range changes {
		if c.writes() {
			annotations[c.key] = c.after
		}
	}
	if len(annotations) == 0 {
		return nil
	}
	raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	return raw
}
