package admission

import "testing"

func TestSuspensionPolicyNamed(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range objs {
		if o.GetKind() == "ValidatingAdmissionPolicy" && o.GetName() == SuspensionPolicyName {
			found = true
		}
	}
	if !found {
		t.Fatalf("no ValidatingAdmissionPolicy named %q in suspension.yaml", SuspensionPolicyName)
	}
}
