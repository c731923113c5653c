package cli

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// ref names an object for a person ("PropagationPolicy demo/web") and,
// for RBAC advice, the resource it is served as.
type ref struct {
	kind, namespace, name string
	// resource is "plural.group" ("deployments.apps"), for RBAC advice.
	resource string
}

func (r ref) String() string {
	switch {
	case r.name == "" && r.namespace == "":
		return r.kind
	case r.name == "":
		return r.kind + " in namespace " + r.namespace
	case r.namespace == "":
		return r.kind + " " + r.name
	}
	return r.kind + " " + r.namespace + "/" + r.name
}

// ExitError carries a process exit code; Err, when set, is printed. diff
// exits 1 for "differences found", so its errors exit 2; rollout status
// exits 1 for a failed rollout and 2 when it stops waiting.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the exit code err asks for: 0 for nil, an ExitError's code,
// else 1.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	return 1
}

// explain turns an error from the hub into one that names the object and
// says what to do; verb is what the command tried ("get", "patch", "list").
func (h *hub) explain(err error, verb string, r ref) error {
	if err == nil {
		return nil
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		return err
	}
	switch {
	case apierrors.IsNotFound(err) && r.name != "":
		hint := "check the name"
		if r.namespace != "" {
			hint = "check the name, and the namespace (-n)"
		}
		return fmt.Errorf("%s not found on the hub at %s: %s", r, h.host, hint)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the hub refused to %s %s (%v): ask its admin for RBAC verb %q on %s for the user of kubeconfig %s",
			verb, r, err, verb, r.resource, h.kubeconfig)
	case meta.IsNoMatchError(err):
		return fmt.Errorf("the hub at %s does not serve %s: %v", h.host, r.kind, err)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return fmt.Errorf("%s %s: %w", verb, r, err)
	}
	return fmt.Errorf("cannot reach the hub at %s (kubeconfig %s): %v; check that it runs (`federator up` starts a local fleet) or name another with --kubeconfig or --fleet",
		h.host, h.kubeconfig, err)
}
