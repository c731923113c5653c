package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/config/install"
	"github.com/federator-dev/federator/pkg/membership"
)

// hostFlags say where the controller runs when not in the hub itself.
type hostFlags struct {
	kubeconfig, context string
	// hubServer is the hub's address as the host's pods reach it.
	hubServer string
}

func (f hostFlags) set() bool { return f.kubeconfig != "" }

// check refuses flags that mean nothing without --host-kubeconfig, so
// they are never ignored.
func (f hostFlags) check() error {
	if f.set() {
		if f.hubServer != "" {
			if u, err := url.Parse(f.hubServer); err != nil || u.Scheme != "https" || u.Host == "" {
				return fmt.Errorf("--hub-server %q: give the hub API server's URL as the host's pods reach it, e.g. https://10.89.0.2:6443", f.hubServer)
			}
		}
		return nil
	}
	switch {
	case f.context != "":
		return errors.New("--host-context names a context of --host-kubeconfig: pass --host-kubeconfig too")
	case f.hubServer != "":
		return errors.New("--hub-server is the hub's address for a controller in another cluster: pass --host-kubeconfig too")
	}
	return nil
}

// connect reaches the host cluster.
func (f hostFlags) connect(connect connector) (*hub, error) {
	return connect(connection{kubeconfig: f.kubeconfig, context: f.context, kubeconfigFlag: "host-kubeconfig"})
}

// installOnHost applies hubObjs to the hub, mints the controller's token
// there, and applies hostObjs with the Secret of the kubeconfig built from
// it to the host. It returns the host, where the Deployment runs.
func installOnHost(ctx context.Context, out io.Writer, connect connector, h *hub, f hostFlags, hubObjs, hostObjs []*unstructured.Unstructured) (*hub, error) {
	host, err := f.connect(connect)
	if err != nil {
		return nil, err
	}
	if err := applyAll(ctx, out, h, "hub", hubObjs); err != nil {
		return nil, err
	}
	token, expires, err := membership.RequestToken(ctx, h.client,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: install.Namespace, Name: install.ServiceAccountName}})
	if err != nil {
		return nil, fmt.Errorf("install on the hub %s: %w", h.host, err)
	}
	server := f.hubServer
	if server == "" {
		server = h.host
	}
	kubeconfig, err := controllerKubeconfig(h.config, server, token)
	if err != nil {
		return nil, fmt.Errorf("install: the hub's kubeconfig %s: %w", h.kubeconfig, err)
	}
	fmt.Fprintf(out, "the controller in %s reaches the hub at %s as ServiceAccount %s/%s (token valid until %s; install again renews it)\n",
		host.host, server, install.Namespace, install.ServiceAccountName, expires.Format(time.RFC3339))
	if err := applyAll(ctx, out, host, "host", withSecret(hostObjs, install.HubKubeconfigSecretObject(kubeconfig))); err != nil {
		return nil, err
	}
	return host, nil
}

// withSecret puts secret after the namespaces of objs and before the rest,
// so the Deployment's pods find it when they start.
func withSecret(objs []*unstructured.Unstructured, secret *unstructured.Unstructured) []*unstructured.Unstructured {
	var namespaces, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			namespaces = append(namespaces, o)
		} else {
			rest = append(rest, o)
		}
	}
	return append(append(namespaces, secret), rest...)
}

// applyAll applies objs to the cluster c (named where in messages) with
// server-side apply, forcing ownership of install's fields.
func applyAll(ctx context.Context, out io.Writer, c *hub, where string, objs []*unstructured.Unstructured) error {
	return applyAs(ctx, out, c, where, InstallFieldManager, forbiddenAdvice, objs, false)
}

// applyAs applies objs as applyAll does, as field manager manager; advice
// says what to do when refused. With dryRun the API server checks each
// write and stores nothing, and nothing is printed.
func applyAs(ctx context.Context, out io.Writer, c *hub, where, manager string, advice func(error) string,
	objs []*unstructured.Unstructured, dryRun bool) error {
	command := strings.TrimPrefix(manager, "federator-")
	opts := []client.ApplyOption{client.FieldOwner(manager), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	for _, o := range objs {
		if err := c.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), opts...); err != nil {
			return fmt.Errorf("%s on the %s %s: %s: %w%s", command, where, c.host, describe(o), err, advice(err))
		}
		if !dryRun {
			fmt.Fprintf(out, "%s applied%s\n", describe(o), onCluster(where))
		}
	}
	return nil
}

// onCluster tells, in install's output, the objects of the host from
// those of the hub; an install into the hub alone says nothing.
func onCluster(where string) string {
	if where == "hub" || where == "" {
		return ""
	}
	return " (" + where + ")"
}

// controllerKubeconfig is a kubeconfig for server, trusting the hub's CA
// as cfg does, authenticating with token.
func controllerKubeconfig(cfg *rest.Config, server, token string) ([]byte, error) {
	if cfg == nil {
		return nil, errors.New("no hub configuration")
	}
	cfg = rest.CopyConfig(cfg)
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return nil, err
	}
	if len(cfg.CAData) == 0 && !cfg.Insecure {
		return nil, errors.New("it names no certificate authority for the hub; the controller in the host cluster needs one to trust the hub (certificate-authority-data)")
	}
	const name = "hub"
	k := clientcmdapi.NewConfig()
	k.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify: cfg.Insecure, TLSServerName: cfg.ServerName}
	k.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	k.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	k.CurrentContext = name
	return clientcmd.Write(*k)
}

// addFlags registers --host-kubeconfig and --host-context.
func (f *hostFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "host-kubeconfig", "", "run the controller in the cluster this kubeconfig `FILE` reaches (the host), against the hub --kubeconfig names")
	fs.StringVar(&f.context, "host-context", "", "context of --host-kubeconfig to use (default: its current context)")
}
