package dashboard

import (
	"encoding/json"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// detailAnnotations are the Work annotations a cell's detail shows.
var detailAnnotations = []string{workkeys.HoldReasonAnnotation, workkeys.HoldMessageAnnotation,
	workkeys.OverrideFailedAnnotation, workkeys.ChangedAtAnnotation, workkeys.BindingGenerationAnnotation,
	workkeys.TemplateHashAnnotation}

// memberConditions are the conditions of the member object, from the
// status the Work collected from its member.
func memberConditions(w *workv1alpha1.Work) []conditionView {
	if len(w.Status.ManifestStatuses) == 0 || w.Status.ManifestStatuses[0].Status == nil {
		return nil
	}
	var status struct {
		Conditions []struct {
			Type, Status, Reason, Message string
			LastTransitionTime            time.Time
			LastUpdateTime                time.Time
		}
	}
	if json.Unmarshal(w.Status.ManifestStatuses[0].Status.Raw, &status) != nil {
		return nil
	}
	var out []conditionView
	for _, c := range status.Conditions {
		since := c.LastTransitionTime
		if since.IsZero() {
			since = c.LastUpdateTime
		}
		out = append(out, conditionView{c.Type, c.Status, c.Reason, c.Message, since})
	}
	return out
}

// deletionNote says what the hub knows of the copy's deletion delay: the
// countdown itself runs on the member (federator.dev/deletion-timestamp),
// which the dashboard does not read.
func deletionNote(w *workv1alpha1.Work) string {
	m := workkeys.FirstManifest(w)
	if m == nil {
		return ""
	}
	if d := m.GetAnnotations()[policykeys.DeletionDelayAnnotation]; d != "" {
		return "deletion delay " + d + ": once removed from this cluster, the member copy is kept that long " +
			"(its countdown is listed under Deletions while it runs)"
	}
	return ""
}
