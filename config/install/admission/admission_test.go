package admission

import (
	"strings"
	"testing"

	"github.com/federator-dev/federator/apis/keys"
)

func TestSuspensionPolicyNamed(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{SuspensionPolicyName, SuspensionAnnotationsPolicyName, DeletionProtectionPolicyName, AgentClusterPolicyName, GateRequestsPolicyName} {
		found := false
		for _, o := range objs {
			if o.GetKind() == "ValidatingAdmissionPolicy" && o.GetName() == name {
				found = true
			}
		}
		if !found {
			t.Errorf("no ValidatingAdmissionPolicy named %q in config/install/admission", name)
		}
	}
}

// TestEveryCheckedKeyIsChecked: each key apis/keys' table says a policy
// checks on write is named in that policy.
func TestEveryCheckedKeyIsChecked(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]string{}
	for _, o := range objs {
		if o.GetKind() == "ValidatingAdmissionPolicy" {
			raw, err := o.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			policies[o.GetName()] = string(raw)
		}
	}
	checked := 0
	for _, k := range keys.Table {
		if k.Admission == "" {
			continue
		}
		checked++
		policy, ok := policies[k.Admission]
		switch {
		case !ok:
			t.Errorf("apis/keys says %s checks %s, but config/install/admission has no such ValidatingAdmissionPolicy", k.Admission, k.Name)
		case !strings.Contains(policy, "'"+k.Name+"'"):
			t.Errorf("apis/keys says %s checks %s, but the policy does not name it", k.Admission, k.Name)
		}
	}
	if checked == 0 {
		t.Fatal("apis/keys names no key an admission policy checks: the suspension annotations are")
	}
}
