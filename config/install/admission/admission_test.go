package admission

import "testing"

func TestSuspensionPolicyNamed(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{SuspensionPolicyName, SuspensionAnnotationsPolicyName, DeletionProtectionPolicyName} {
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
