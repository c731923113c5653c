// Package membership owns how member clusters join the hub and how the hub
// reaches them: registration as `karmadactl join` does it in push mode (a
// ServiceAccount token and CA bundle in a Secret in karmada-cluster, and a
// cluster.karmada.io Cluster), and building a client config back from a
// Cluster and its Secret.
package membership

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Names and keys karmadactl join uses (pkg/karmadactl/options,
// pkg/util/credential.go, pkg/util/constants.go in Karmada v1.16). They are
// spelled out here because importing Karmada's pkg/util would pull in the
// Kubernetes API server libraries.
const (
	// memberQPS and memberBurst are high so client-go's 5/10 never limits.
	memberQPS   = 1000
	memberBurst = 2000

	// ClusterNamespace holds the member credentials in the hub and the
	// ServiceAccounts in each member (karmadactl's --cluster-namespace default).
	ClusterNamespace = "karmada-cluster"

	karmadaSystemLabel      = "karmada.io/system"
	karmadaSystemLabelValue = "true"

	// impersonatorName is the ServiceAccount karmadactl join creates in every
	// member for Karmada's unified authentication.
	impersonatorName = "impersonator"

	// tokenLifetime: no kube-controller-manager fills ServiceAccount token
	// Secrets here, so members get TokenRequest tokens; a year outlives any
	// local fleet (envtest's certificates last a week).
	tokenLifetime = 365 * 24 * time.Hour

	// memberRequestTimeout is Karmada's timeout for member clients
	// (pkg/util/membercluster_client.go).
	memberRequestTimeout = 32 * time.Second
)

// clusterPolicyRules grant full access, as karmadactl join's ClusterRole does.
var clusterPolicyRules = []rbacv1.PolicyRule{
	{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
	{Verbs: []string{"get"}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
}

// member is a cluster being registered: its name and admin access.
type member struct {
	Name   string
	Config *rest.Config
}

// APIEndpoint is the address the hub reaches the member at.
func (m member) APIEndpoint() string { return m.Config.Host }

// Register registers the cluster name, reached with config (admin access), with the hub as `karmadactl join` does in push
// mode. In the member, namespace karmada-cluster gets ServiceAccounts
// karmada-<member> (bound to ClusterRole/ClusterRoleBinding
// karmada-controller-manager:karmada-<member>, full access) and
// karmada-impersonator; their tokens come from the TokenRequest API. In the
// hub, namespace karmada-cluster gets Secret <member> (token, caBundle) and
// Secret <member>-impersonator (token), both owned by the cluster.karmada.io
// Cluster <member> (push mode, spec.apiEndpoint, spec.id = the member's
// kube-system UID). Registering again updates everything in place.
//
// hub's scheme must know core/v1 and cluster.karmada.io/v1alpha1.
func Register(ctx context.Context, hub client.Client, name string, config *rest.Config) error {
	if config == nil {
		return fmt.Errorf("membership: registering %s: no client config for the member", name)
	}
	member := &member{Name: name, Config: config}
	clusterGVK := clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster")
	if !hub.Scheme().Recognizes(clusterGVK) {
		return fmt.Errorf("membership: registering %s: the hub client's scheme lacks %s: add clusterv1alpha1.Install to it", member.Name, clusterGVK)
	}
	// A Pull cluster is refused before anything is written in the member.
	registered := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, registered); err == nil && Pull(registered) {
		return &ModeError{Cluster: name, Registered: clusterv1alpha1.Pull}
	} else if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("membership: registering %s: reading its Cluster on the hub: %w", name, err)
	}
	creds, err := memberCredentials(ctx, member)
	if err != nil {
		return err
	}
	if err := registerInHub(ctx, hub, member, creds); err != nil {
		return fmt.Errorf("membership: registering %s in the hub: %w", member.Name, err)
	}
	return nil
}

// credentials are what the hub needs to reach a member.
type credentials struct {
	clusterID         string
	token             string
	impersonatorToken string
	caBundle          []byte
}

// memberCredentials creates the member-side objects of a join and returns
// fresh tokens for its ServiceAccounts.
func memberCredentials(ctx context.Context, member *member) (credentials, error) {
	wrap := func(err error) error {
		return fmt.Errorf("membership: registering %s, in the member: %w", member.Name, err)
	}
	c, err := client.New(member.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return credentials{}, wrap(err)
	}
	if err := ensureNamespace(ctx, c, ClusterNamespace); err != nil {
		return credentials{}, wrap(err)
	}

	kubeSystem := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem); err != nil {
		return credentials{}, wrap(err)
	}

	sa, err := ensureServiceAccount(ctx, c, names.GenerateServiceAccountName(member.Name))
	if err != nil {
		return credentials{}, wrap(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: names.GenerateRoleName(sa.Name)}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, role, func() error {
		addSystemLabel(&role.ObjectMeta)
		role.Rules = clusterPolicyRules
		return nil
	}); err != nil {
		return credentials{}, wrap(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, binding, func() error {
		addSystemLabel(&binding.ObjectMeta)
		binding.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}
		if binding.RoleRef.Name != "" && binding.RoleRef.Name != role.Name {
			return fmt.Errorf("ClusterRoleBinding %s refers to ClusterRole %s; delete it and register again", binding.Name, binding.RoleRef.Name)
		}
		binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}
		return nil
	}); err != nil {
		return credentials{}, wrap(err)
	}
	token, _, err := RequestToken(ctx, c, sa)
	if err != nil {
		return credentials{}, wrap(err)
	}

	impersonator, err := ensureServiceAccount(ctx, c, names.GenerateServiceAccountName(impersonatorName))
	if err != nil {
		return credentials{}, wrap(err)
	}
	impersonatorToken, _, err := RequestToken(ctx, c, impersonator)
	if err != nil {
		return credentials{}, wrap(err)
	}

	return credentials{
		clusterID:         string(kubeSystem.UID),
		token:             token,
		impersonatorToken: impersonatorToken,
		// What a ServiceAccount token Secret's ca.crt would hold: the CA
		// that signed the member API server's serving certificate.
		caBundle: member.Config.CAData,
	}, nil
}

func registerInHub(ctx context.Context, hub client.Client, member *member, creds credentials) error {
	if err := ensureNamespace(ctx, hub, ClusterNamespace); err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ClusterNamespace, Name: member.Name}}
	impersonatorSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: ClusterNamespace,
		Name:      names.GenerateImpersonationSecretName(member.Name),
	}}
	secretData := map[*corev1.Secret]map[string][]byte{
		secret: {
			clusterv1alpha1.SecretTokenKey:  []byte(creds.token),
			clusterv1alpha1.SecretCADataKey: creds.caBundle,
		},
		impersonatorSecret: {
			clusterv1alpha1.SecretTokenKey: []byte(creds.impersonatorToken),
		},
	}

	// Like karmadactl: Secrets first, so the Cluster never refers to a
	// missing Secret, then the Cluster, then the Secrets become owned by it
	// (deleting the Cluster collects them). On a re-registration the Cluster
	// exists and each Secret is written once.
	owner := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: member.Name}, owner); apierrors.IsNotFound(err) {
		owner = nil
	} else if err != nil {
		return err
	} else if Pull(owner) {
		return &ModeError{Cluster: member.Name, Registered: clusterv1alpha1.Pull}
	}
	upsertSecrets := func(owner *clusterv1alpha1.Cluster) error {
		for _, s := range []*corev1.Secret{secret, impersonatorSecret} {
			if _, err := controllerutil.CreateOrUpdate(ctx, hub, s, func() error {
				addSystemLabel(&s.ObjectMeta)
				s.Data = secretData[s]
				if owner != nil {
					s.OwnerReferences = []metav1.OwnerReference{
						*metav1.NewControllerRef(owner, clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster")),
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := upsertSecrets(owner); err != nil {
		return err
	}

	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: member.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, hub, cluster, func() error {
		cluster.Spec.ID = creds.clusterID
		cluster.Spec.SyncMode = clusterv1alpha1.Push
		cluster.Spec.APIEndpoint = member.APIEndpoint()
		cluster.Spec.InsecureSkipTLSVerification = false
		cluster.Spec.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: secret.Namespace, Name: secret.Name}
		cluster.Spec.ImpersonatorSecretRef = &clusterv1alpha1.LocalSecretReference{
			Namespace: impersonatorSecret.Namespace,
			Name:      impersonatorSecret.Name,
		}
		return nil
	}); err != nil {
		return err
	}
	if owner == nil || owner.UID != cluster.UID {
		return upsertSecrets(cluster) // only the owner references change
	}
	return nil
}

// ErrPullMode is the refusal to reach a member whose Cluster is in Pull
// mode: the hub never writes to it, whichever of its controllers asks.
var ErrPullMode = errors.New("is in Pull mode (spec.syncMode: Pull): its agent applies its Works, and the hub writes nothing to it")

// Pull says whether cluster is in Pull mode: an agent in the member
// (`federator agent`, Karmada's karmada-agent) pulls its Works from the
// hub and applies them, and keeps its status.
func Pull(cluster *clusterv1alpha1.Cluster) bool {
	return cluster.Spec.SyncMode == clusterv1alpha1.Pull
}

// Mode is the cluster's mode as a person reads it: Pull, or Push (a
// Cluster that names none is pushed to, as Karmada's default).
func Mode(cluster *clusterv1alpha1.Cluster) string {
	if Pull(cluster) {
		return string(clusterv1alpha1.Pull)
	}
	return string(clusterv1alpha1.Push)
}

// MemberConfig builds the rest.Config for reaching a registered member from
// its Cluster object: spec.apiEndpoint plus the token and caBundle of the
// Secret spec.secretRef names, which hub reads (in a controller manager,
// NewCredentialReader's reader). It follows Karmada's
// BuildClusterConfig (pkg/util/membercluster_client.go), including the
// 32-second request timeout; copy the config and clear Timeout for watches.
//
// A Cluster in Pull mode gets no config (ErrPullMode): its agent applies
// its Works, and nothing on the hub may reach it.
func Config(ctx context.Context, hub client.Reader, cluster *clusterv1alpha1.Cluster) (*rest.Config, error) {
	name := cluster.Name
	if Pull(cluster) {
		return nil, fmt.Errorf("cluster %s %w", name, ErrPullMode)
	}
	if cluster.Spec.APIEndpoint == "" {
		return nil, fmt.Errorf("cluster %s: spec.apiEndpoint is empty", name)
	}
	ref := cluster.Spec.SecretRef
	if ref == nil {
		return nil, fmt.Errorf("cluster %s: spec.secretRef is not set; register it again", name)
	}
	secret := &corev1.Secret{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		return nil, fmt.Errorf("cluster %s: reading its secret %s/%s: %w", name, ref.Namespace, ref.Name, err)
	}
	if err := madeFor(cluster, secret); err != nil {
		return nil, err
	}
	token := secret.Data[clusterv1alpha1.SecretTokenKey]
	if len(token) == 0 {
		return nil, fmt.Errorf("cluster %s: secret %s/%s has no %q", name, ref.Namespace, ref.Name, clusterv1alpha1.SecretTokenKey)
	}
	cfg := &rest.Config{
		Host:        cluster.Spec.APIEndpoint,
		BearerToken: string(token),
		Timeout:     memberRequestTimeout,
		QPS:         memberQPS,
		Burst:       memberBurst,
	}
	if cluster.Spec.InsecureSkipTLSVerification {
		cfg.TLSClientConfig.Insecure = true
	} else {
		ca, ok := secret.Data[clusterv1alpha1.SecretCADataKey]
		if !ok {
			return nil, fmt.Errorf("cluster %s: secret %s/%s has no %q", name, ref.Namespace, ref.Name, clusterv1alpha1.SecretCADataKey)
		}
		cfg.TLSClientConfig.CAData = ca
	}
	if cluster.Spec.ProxyURL != "" {
		proxy, err := url.Parse(cluster.Spec.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: spec.proxyURL: %w", name, err)
		}
		cfg.Proxy = http.ProxyURL(proxy)
		if len(cluster.Spec.ProxyHeader) > 0 {
			cfg.Wrap(proxyConnectHeaders(cluster.Spec.ProxyHeader))
		}
	}
	return cfg, nil
}

// madeFor is nil when secret was made for cluster: owned by that Cluster
// (as join, karmadactl join and karmada-agent --report-secrets leave it),
// or, owned by no Cluster, named after it (Karmada's convention, for a
// Secret written by hand). A Cluster that names another
// cluster's Secret (its spec.secretRef changed to karmada-cluster/member1,
// say) is never dialled with it: the hub would reach member1, or anywhere
// its spec.apiEndpoint says, with member1's token.
func madeFor(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) error {
	if ref := metav1.GetControllerOf(secret); ref != nil &&
		schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind() == clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster").GroupKind() {
		if ref.UID == cluster.UID && ref.Name == cluster.Name {
			return nil
		}
		if ref.Name == cluster.Name {
			return fmt.Errorf("cluster %s: secret %s/%s (its spec.secretRef) is owned by an earlier Cluster %s (uid %s), not this one: "+
				"register the cluster again (federator join %s --kubeconfig ...)", cluster.Name, secret.Namespace, secret.Name, ref.Name, ref.UID, cluster.Name)
		}
		return fmt.Errorf("cluster %s: spec.secretRef names secret %s/%s, which holds the credentials of cluster %s, not its own: "+
			"the hub does not reach a cluster with another's credentials; set spec.secretRef to the cluster's own Secret "+
			"(register it again: federator join %s --kubeconfig ...)", cluster.Name, secret.Namespace, secret.Name, ref.Name, cluster.Name)
	}
	if secret.Name == cluster.Name {
		return nil
	}
	return fmt.Errorf("cluster %s: spec.secretRef names secret %s/%s, which is neither owned by Cluster %s nor named after it: "+
		"the hub reaches a cluster only with credentials made for it; name the Secret %s (%s/%s, as karmadactl join does), or make Cluster %s its owner",
		cluster.Name, secret.Namespace, secret.Name, cluster.Name, cluster.Name, ClusterNamespace, cluster.Name, cluster.Name)
}

// proxyConnectHeaders sends spec.proxyHeader on the proxy CONNECT request, as
// Karmada's proxyHeaderRoundTripper does (comma-separated values).
func proxyConnectHeaders(headers map[string]string) func(http.RoundTripper) http.RoundTripper {
	h := make(http.Header, len(headers))
	for key, values := range headers {
		h[textproto.CanonicalMIMEHeaderKey(key)] = strings.Split(values, ",")
	}
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if tr, ok := rt.(*http.Transport); ok {
				tr = tr.Clone()
				tr.ProxyConnectHeader = h
				return tr.RoundTrip(req)
			}
			return rt.RoundTrip(req)
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// ensureNamespace creates a namespace labelled as Karmada's own, leaving an
// existing one as it is (as karmadactl does).
func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	addSystemLabel(&ns.ObjectMeta)
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func ensureServiceAccount(ctx context.Context, c client.Client, name string) (*corev1.ServiceAccount, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ClusterNamespace, Name: name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, sa, func() error {
		addSystemLabel(&sa.ObjectMeta)
		return nil
	}); err != nil {
		return nil, err
	}
	return sa, nil
}

// RequestToken asks the API server c talks to for a token of sa from the
// TokenRequest API, lasting tokenLifetime (a year) unless the server grants
// less, and returns it with its expiry.
func RequestToken(ctx context.Context, c client.Client, sa *corev1.ServiceAccount) (string, time.Time, error) {
	seconds := int64(tokenLifetime / time.Second)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", time.Time{}, fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	if tr.Status.Token == "" {
		return "", time.Time{}, fmt.Errorf("the token request for ServiceAccount %s/%s returned no token", sa.Namespace, sa.Name)
	}
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time, nil
}

func addSystemLabel(meta *metav1.ObjectMeta) {
	labels := maps.Clone(meta.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[karmadaSystemLabel] = karmadaSystemLabelValue
	meta.Labels = labels
}
