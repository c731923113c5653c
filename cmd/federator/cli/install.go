package cli

import (
	"context"
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
	return []*cobra.Command{newInstallCommand(c, defaultImage), newUninstallCommand(c), newJoinCommand(c, m), newUnjoinCommand(c)}
}

func newInstallCommand(connect connector, defaultImage string) *cobra.Command {
	var conn connection
	var export, waitAvailable bool
	var image string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "install [--export] [--image IMAGE]",
		Short: "Install federator into the hub cluster: CRDs, admission policies, RBAC and the controller Deployment (or print them with --export)",
		Long: `Install applies, with server-side apply (field manager ` + InstallFieldManager + `), the manifests
of config/install embedded in this binary: namespace ` + install.Namespace + `, the CRDs and
admission policies, the controller's ServiceAccount and least-privilege RBAC,
the Deployment ` + install.DeploymentName + ` (2 replicas taking turns) and its metrics
Service. It then waits until the Deployment is Available. Running it again
upgrades what it installed, CRDs included. --export prints the manifests
instead, for kubectl apply or a GitOps repository.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			for _, o := range objs {
				if err := h.client.Apply(cmd.Context(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
					client.FieldOwner(InstallFieldManager), client.ForceOwnership); err != nil {
					return fmt.Errorf("install on the hub %s: %s: %w%s", h.host, describe(o), err, forbiddenAdvice(err))
				}
				fmt.Fprintf(out, "%s applied\n", describe(o))
			}
			if !waitAvailable {
				return nil
			}
			return waitDeploymentAvailable(cmd.Context(), h, out, image, timeout)
		},
	}
	f := cmd.Flags()
	conn.addFlags(f, false)
	_ = f.MarkHidden("namespace") // the manifests name their namespaces
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
	if apierrors.IsForbidden(err) {
		return " (install needs a cluster administrator: it creates CRDs, ClusterRoles and their bindings)"
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
	var crds bool
	cmd := &cobra.Command{
		Use:   "uninstall [--crds]",
		Short: "Remove what federator install applied; the CRDs and every object of them stay unless --crds",
		Long: `Uninstall deletes the controller Deployment, its Service, ServiceAccount and RBAC.
It keeps the CRDs and every object of them (policies, bindings, Works, Clusters,
Rollouts, Gates), the admission policies that guard them and namespace
` + install.Namespace + ` (the rollout history of ClusterRollouts), so a later install
carries on where this one stopped; --crds deletes those too, and with the CRDs
every object of their kinds. Namespace karmada-cluster (member credentials)
always stays: federator unjoin removes a member's.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			objs, err := install.Objects("")
			if err != nil {
				return err
			}
			h, err := connect(conn)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			// Reverse order: the Deployment goes before the rights it runs with.
			for _, o := range slices.Backward(objs) {
				if uninstallKeeps(o, crds) {
					continue
				}
				err := h.client.Delete(cmd.Context(), o, client.PropagationPolicy("Background"))
				switch {
				case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
					fmt.Fprintf(out, "%s not found\n", describe(o))
				case err != nil:
					return fmt.Errorf("uninstall from the hub %s: %s: %w%s", h.host, describe(o), err, forbiddenAdvice(err))
				default:
					fmt.Fprintf(out, "%s deleted\n", describe(o))
				}
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
	f.BoolVar(&crds, "crds", false, "also delete the CRDs (and so every object of them), the admission policies and namespace "+install.Namespace)
	return cmd
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
