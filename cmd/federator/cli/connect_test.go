package cli

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestChooseKubeconfig(t *testing.T) {
	env := func(kubeconfigVar string, files ...string) environment {
		return environment{home: "/home/op",
			getenv: func(k string) string {
				if k == "KUBECONFIG" {
					return kubeconfigVar
				}
				return ""
			},
			exists: func(p string) bool {
				for _, f := range files {
					if f == p {
						return true
					}
				}
				return false
			}}
	}
	cases := []struct {
		name     string
		conn     connection
		fleetSet bool
		env      environment
		want     string // the choice as messages name it, or the error
	}{
		{"--kubeconfig wins over everything", connection{kubeconfig: "hub.yaml", fleet: ".fleet"}, false,
			env("/env/config", "hub.yaml", ".fleet/hub.kubeconfig"), "hub.yaml (--kubeconfig)"},
		{"a named --fleet wins over $KUBECONFIG", connection{fleet: "/tmp/f"}, true,
			env("/env/config", "/tmp/f/hub.kubeconfig"), "/tmp/f/hub.kubeconfig (--fleet /tmp/f)"},
		{"$KUBECONFIG before the default fleet", connection{fleet: ".fleet"}, false,
			env("/a:/b", ".fleet/hub.kubeconfig"), "[/a /b] ($KUBECONFIG)"},
		{".fleet when it exists and nothing is named", connection{fleet: ".fleet"}, false,
			env("", ".fleet/hub.kubeconfig", "/home/op/.kube/config"), ".fleet/hub.kubeconfig (the default --fleet .fleet)"},
		{"~/.kube/config last, as kubectl", connection{fleet: ".fleet"}, false,
			env("", "/home/op/.kube/config"), "/home/op/.kube/config (the default kubeconfig)"},
		{"nothing at all says what it tried", connection{fleet: ".fleet"}, false, env(""),
			"error: no hub to talk to: no --kubeconfig, $KUBECONFIG is empty, there is no .fleet/hub.kubeconfig here and no /home/op/.kube/config"},
		{"both named is refused", connection{kubeconfig: "hub.yaml", fleet: "/tmp/f"}, true, env("", "hub.yaml"),
			"error: --kubeconfig and --fleet both name a hub: pass one of them"},
		{"a missing --kubeconfig file is named", connection{kubeconfig: "nope.yaml"}, false, env(""),
			"error: --kubeconfig nope.yaml: no such file"},
		{"a fleet directory without a hub says how to start one", connection{fleet: "/tmp/f"}, true, env(""),
			"error: --fleet /tmp/f: /tmp/f/hub.kubeconfig does not exist; start a fleet there with `federator up --dir /tmp/f`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			choice, err := chooseKubeconfig(tc.conn, tc.fleetSet, tc.env)
			got := choice.String()
			if err != nil {
				got = "error: " + err.Error()
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	h := newTestHub(t)
	pp := ref{kind: "PropagationPolicy", namespace: "demo", name: "web", resource: "propagationpolicies.policy.karmada.io"}
	gr := schema.GroupResource{Group: "policy.karmada.io", Resource: "propagationpolicies"}
	cases := []struct {
		name string
		err  error
		verb string
		want string
	}{
		{"not found names the object and where to look", apierrors.NewNotFound(gr, "web"), "get",
			"PropagationPolicy demo/web not found on the hub at https://hub.test:6443: check the name, and the namespace (-n)"},
		{"forbidden names the RBAC verb and resource to ask for", apierrors.NewForbidden(gr, "web", errors.New(`User "dev" cannot patch`)), "patch",
			`the hub refused to patch PropagationPolicy demo/web (propagationpolicies.policy.karmada.io "web" is forbidden: User "dev" cannot patch): ask its admin for RBAC verb "patch" on propagationpolicies.policy.karmada.io for the user of kubeconfig hub.kubeconfig (--kubeconfig)`},
		{"an unreachable hub names its address and the kubeconfig tried", &url.Error{Op: "Get", URL: "https://hub.test:6443/apis", Err: errors.New("connection refused")}, "get",
			"cannot reach the hub at https://hub.test:6443 (kubeconfig hub.kubeconfig (--kubeconfig)): Get \"https://hub.test:6443/apis\": connection refused; check that it runs"},
		{"other API errors keep the server's words", apierrors.NewConflict(gr, "web", errors.New("changed")), "patch",
			"patch PropagationPolicy demo/web: Operation cannot be fulfilled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := h.explain(tc.err, tc.verb, pp)
			if got == nil || !strings.HasPrefix(got.Error(), tc.want) {
				t.Errorf("got  %v\nwant %s", got, tc.want)
			}
		})
	}
	if h.explain(nil, "get", pp) != nil {
		t.Error("explain(nil) is not nil")
	}
	exit := &ExitError{Code: 2, Err: fmt.Errorf("x")}
	if got := h.explain(exit, "get", pp); got != exit || ExitCode(got) != 2 {
		t.Errorf("an ExitError is passed on as it is, got %v", got)
	}
}
