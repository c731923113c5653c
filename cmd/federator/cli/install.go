package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/config/install"
)

// InstallFieldManager owns, on the hub, what `federator install` applies.
const InstallFieldManager = "federator-install"

// InstallCommands are the commands that put federator into a cluster and
// clusters into the federation: install, uninstall, join, unjoin.
// defaultImage is the controller image install writes unless --image says
// otherwise: the one `make image` builds from the same checkout.
func InstallCommands(defaultImage string) []*cobra.Command {
	return installCommands(connect, defaultImage, realMembers())
}

func installCommands(c connector, defaultImage string, m members) []*cobra.Command {
	return []*cobra.Command{newInstallCommand(c, defaultImage), newUninstallCommand(c), newJoinCommand(c, m, defaultImage), newUnjoinCommand(c)}
}

func newInstallCommand(connect connector, defaultImage string) *cobra.Command {
	var conn connection
	var host hostFlags
	var export, waitAvailable bool
	var image string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "install [--export] [--image IMAGE] [--host-kubeconfig FILE [--hub-server URL]]",
		Short: "Install federator into the hub cluster: CRDs, admission policies, RBAC and the controller Deployment (or print them with --export)",
		Long: `Install applies, with server-side apply (field manager ` + InstallFieldManager + `), the manifests
of config/install embedded in this binary: namespace ` + install.Namespace + `, the CRDs and
admission policies, the controller's ServiceAccount and least-privilege RBAC,
the Deployment ` + install.DeploymentName + ` (2 replicas taking turns) and its metrics
Service. It then waits until the Deployment is Available. Running it again
upgrades what it installed, CRDs included. --export prints the manifests
instead, for kubectl apply or a GitOps repository.

A hub that runs no workload controllers (Karmada's API server, federator up's
hub) keeps Deployments as templates and cannot run the controller. With
--host-kubeconfig the controller runs in that other cluster, the host: the hub
gets the CRDs, admission policies, namespaces, ServiceAccount and RBAC; the
host gets namespace ` + install.Namespace + `, Secret ` + install.HubKubeconfigSecret + ` (a kubeconfig for the
hub with a token of that ServiceAccount, minted now), the Deployment and the
Service. --hub-server is the hub's address as the host's pods reach it, when
that differs from the hub kubeconfig's. The Lease stays on the hub.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := host.check(); err != nil {
				return err
			}
			if export && host.set() {
				return errors.New("--export prints the manifests of an install into the hub; with --host-kubeconfig install writes a Secret holding a token it mints on the hub, so it applies them itself: drop --export")
			}
			objs, err := install.Objects(image)
			if err != nil {
				return err
			}
			if export {
				out, err := install.YAML(objs)
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(out)
				return err
			}
			h, err := connect(conn)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			runsIn := h
			if host.set() {
				hubObjs, hostObjs, err := install.HostSplit(objs)
				if err != nil {
					return err
				}
				if runsIn, err = installOnHost(cmd.Context(), out, connect, h, host, hubObjs, hostObjs); err != nil {
					return err
				}
			} else if err := applyAll(cmd.Context(), out, h, "hub", objs); err != nil {
				return err
			}
			if !waitAvailable {
				return nil
			}
			return waitDeploymentAvailable(cmd.Context(), runsIn, out, image, timeout)
		},
	}
	f := cmd.Flags()
	conn.addFlags(f, false)
	_ = f.MarkHidden("namespace") // the manifests name their namespaces
	host.addFlags(f)
	f.StringVar(&host.hubServer, "hub-server", "", "with --host-kubeconfig: the hub API server's `URL` as pods of the host reach it (default: the hub kubeconfig's server)")
	f.BoolVar(&export, "export", false, "print the manifests as YAML instead of applying them")
	f.StringVar(&image, "image", defaultImage, "the controller's image")
	f.BoolVar(&waitAvailable, "wait", true, "wait until the controller Deployment is Available")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the Deployment")
	return cmd
}

// describe names an object as kubectl's apply output does.
func describe(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetKind() + " " + o.GetName()
	}
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

func forbiddenAdvice(err error) string {
	return forbiddenAdviceFor("install", "creates CRDs, ClusterRoles and their bindings", err)
}

// forbiddenAdviceFor says, when err is a refusal, that command needs a
// cluster administrator, as it does what it does.
func forbiddenAdviceFor(command, does string, err error) string {
	if apierrors.IsForbidden(err) {
		return fmt.Sprintf(" (%s needs a cluster administrator: it %s)", command, does)
	}
	return ""
}

// waitDeploymentAvailable waits until the controller Deployment has all its
// replicas updated and available, and says why not when it gives up.
func waitDeploymentAvailable(ctx context.Context, h *hub, out io.Writer, image string, timeout time.Duration) error {
	key := client.ObjectKey{Namespace: install.Namespace, Name: install.DeploymentName}
	fmt.Fprintf(out, "waiting up to %s for Deployment %s to be Available (every replica of image %s ready)...\n", timeout, key, image)
	d := &appsv1.Deployment{}
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		lastErr = h.client.Get(ctx, key, d)
		return lastErr == nil && deploymentAvailable(d), nil
	})
	if err == nil {
		fmt.Fprintf(out, "Deployment %s is Available: %d/%d replicas ready\n", key, d.Status.ReadyReplicas, ptrOr(d.Spec.Replicas, 1))
		return nil
	}
	if lastErr != nil {
		return fmt.Errorf("the Deployment %s is not Available after %s: %w", key, timeout, lastErr)
	}
	why := ""
	if c := deploymentCondition(d, appsv1.DeploymentAvailable); c != nil && c.Message != "" {
		why = "; " + c.Message
	}
	return fmt.Errorf("the Deployment %s is not Available after %s: %d/%d replicas ready%s. "+
		"See `kubectl -n %s get pods` and `kubectl -n %s describe pods`; a node that cannot pull %s needs it loaded "+
		"(`make image`, then `kind load docker-image %s`, say), or give --image one it can pull",
		key, timeout, d.Status.ReadyReplicas, ptrOr(d.Spec.Replicas, 1), why, key.Namespace, key.Namespace, image, image)
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// deploymentAvailable: the Deployment's controller has seen its latest
// spec, and every replica runs it and is available (as `kubectl rollout
// status` decides).
func deploymentAvailable(d *appsv1.Deployment) bool {
	want := ptrOr(d.Spec.Replicas, 1)
	c := deploymentCondition(d, appsv1.DeploymentAvailable)
	return d.Status.ObservedGeneration >= d.Generation && c != nil && c.Status == corev1.ConditionTrue &&
		d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want && d.Status.Replicas == want
}

func newUninstallCommand(connect connector) *cobra.Command {
	var conn connection
	var host hostFlags
	var crds bool
	cmd := &cobra.Command{
		Use:   "uninstall [--crds] [--host-kubeconfig FILE]",
		Short: "Remove what federator install applied; the CRDs and every object of them stay unless --crds",
		Long: `Uninstall deletes the controller Deployment, its Service, ServiceAccount and RBAC.
It keeps the CRDs and every object of them (policies, bindings, Works, Clusters,
Rollouts, Gates), the admission policies that guard them and namespace
` + install.Namespace + ` (the rollout history of ClusterRollouts), so a later install
carries on where this one stopped; --crds deletes those too, and with the CRDs
every object of their kinds. Namespace karmada-cluster (member credentials)
always stays: federator unjoin removes a member's. For a controller installed
with --host-kubeconfig, pass it again: the Deployment, its Service and Secret
` + install.HubKubeconfigSecret + ` go from the host first.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := host.check(); err != nil {
				return err
			}
			objs, err := install.Objects("")
			if err != nil {
				return err
			}
			h, err := connect(conn)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if host.set() {
				hubObjs, hostObjs, err := install.HostSplit(objs)
				if err != nil {
					return err
				}
				hc, err := host.connect(connect)
				if err != nil {
					return err
				}
				if err := deleteInstalled(cmd.Context(), out, hc, "host", withSecret(hostObjs, install.HubKubeconfigSecretObject(nil)), crds); err != nil {
					return err
				}
				objs = hubObjs
			}
			if err := deleteInstalled(cmd.Context(), out, h, "hub", objs, crds); err != nil {
				return err
			}
			if crds {
				fmt.Fprintln(out, "the CRDs are deleted, and with them every policy, binding, Work, Cluster, Rollout and Gate on the hub")
			} else {
				fmt.Fprintf(out, "kept (uninstall --crds removes them, and every object of the CRDs): %d CustomResourceDefinitions and the objects of them, "+
					"the admission policies, namespace %s\n", countKind(objs, "CustomResourceDefinition"), install.Namespace)
			}
			fmt.Fprintln(out, "kept: namespace karmada-cluster, with the credentials of joined members (federator unjoin NAME removes a member's)")
			return nil
		},
	}
	f := cmd.Flags()
	conn.addFlags(f, false)
	_ = f.MarkHidden("namespace")
	host.addFlags(f)
	f.BoolVar(&crds, "crds", false, "also delete the CRDs (and so every object of them), the admission policies and namespace "+install.Namespace)
	return cmd
}

// deleteInstalled deletes objs from c (named where in messages) in reverse
// order, so a Deployment goes before the rights it runs with, except what
// uninstall keeps.
func deleteInstalled(ctx context.Context, out io.Writer, c *hub, where string, objs []*unstructured.Unstructured, crds bool) error {
	return deleteAll(ctx, out, c, where, "uninstall", forbiddenAdvice, slices.DeleteFunc(slices.Clone(objs),
		func(o *unstructured.Unstructured) bool { return uninstallKeeps(o, crds) }))
}

// deleteAll deletes objs from c (named where in messages) in reverse
// order, saying which it deleted and which were not there; command and
// advice say, in an error, what was doing it and what to do.
func deleteAll(ctx context.Context, out io.Writer, c *hub, where, command string, advice func(error) string, objs []*unstructured.Unstructured) error {
	for _, o := range slices.Backward(objs) {
		err := c.client.Delete(ctx, o, client.PropagationPolicy("Background"))
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			fmt.Fprintf(out, "%s not found%s\n", describe(o), onCluster(where))
		case err != nil:
			return fmt.Errorf("%s from the %s %s: %s: %w%s", command, where, c.host, describe(o), err, advice(err))
		default:
			fmt.Fprintf(out, "%s deleted%s\n", describe(o), onCluster(where))
		}
	}
	return nil
}

// uninstallKeeps says what uninstall leaves: the API (CRDs, the admission
// policies guarding it) and namespace federator-system unless crds; the
// member credentials' namespace always.
func uninstallKeeps(o *unstructured.Unstructured, crds bool) bool {
	switch {
	case o.GetKind() == "Namespace" && o.GetName() == "karmada-cluster":
		return true
	case o.GetKind() == "Namespace", o.GetKind() == "CustomResourceDefinition",
		o.GetKind() == "ValidatingAdmissionPolicy", o.GetKind() == "ValidatingAdmissionPolicyBinding":
		return !crds
	}
	return false
}

func countKind(objs []*unstructured.Unstructured, kind string) int {
	n := 0
	for _, o := range objs {
		if o.GetKind() == kind {
			n++
		}
	}
	return n
}
