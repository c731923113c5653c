package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/pkg/membership"
)

// defaultFleet is where `federator up` writes its kubeconfigs unless told
// otherwise; a CLI run beside it finds the hub without flags.
const defaultFleet = ".fleet"

// hubKubeconfig is the hub's kubeconfig in a fleet directory.
const hubKubeconfig = "hub.kubeconfig"

// connection is where a command finds the hub, as its flags say.
type connection struct {
	flags         *pflag.FlagSet
	kubeconfig    string
	fleet         string
	context       string
	namespace     string
	allNamespaces bool
	// kubeconfigFlag names the hub's kubeconfig flag in messages:
	// "hub-kubeconfig" for join, whose --kubeconfig is the member's.
	kubeconfigFlag string
}

func (c connection) kubeconfigFlagName() string {
	if c.kubeconfigFlag != "" {
		return "--" + c.kubeconfigFlag
	}
	return "--kubeconfig"
}

// addFlags registers the connection flags; -A only where a command lists.
func (c *connection) addFlags(fs *pflag.FlagSet, allNamespaces bool) {
	c.flags = fs
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "the hub's kubeconfig (default: --fleet's if given, else $KUBECONFIG, else .fleet/hub.kubeconfig if it exists, else ~/.kube/config)")
	fs.StringVar(&c.fleet, "fleet", defaultFleet, "a fleet `DIR` written by federator up --dir: use DIR/hub.kubeconfig")
	fs.StringVar(&c.context, "context", "", "kubeconfig context to use (default: its current context)")
	fs.StringVarP(&c.namespace, "namespace", "n", "", "namespace (default: the context's, else \"default\")")
	if allNamespaces {
		fs.BoolVarP(&c.allNamespaces, "all-namespaces", "A", false, "every namespace, and cluster-scoped objects")
	}
}

// environment is what choosing a kubeconfig looks at besides the flags.
type environment struct {
	getenv func(string) string
	exists func(path string) bool
	home   string
}

func osEnvironment() environment {
	home, _ := os.UserHomeDir()
	return environment{getenv: os.Getenv, home: home, exists: func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	}}
}

// kubeconfigChoice is the kubeconfig files a command reads and how they
// were chosen, for every message that names the hub.
type kubeconfigChoice struct {
	paths  []string
	origin string
}

func (k kubeconfigChoice) String() string {
	if len(k.paths) == 1 {
		return k.paths[0] + " (" + k.origin + ")"
	}
	return fmt.Sprintf("%v (%s)", k.paths, k.origin)
}

// chooseKubeconfig picks the hub's kubeconfig: --kubeconfig, else an
// explicit --fleet, else $KUBECONFIG, else .fleet/hub.kubeconfig when it
// exists, else ~/.kube/config. An explicit --fleet beats $KUBECONFIG
// because a person who names a fleet means it, whatever the shell exports.
func chooseKubeconfig(c connection, fleetSet bool, env environment) (kubeconfigChoice, error) {
	switch {
	case c.kubeconfig != "" && fleetSet:
		return kubeconfigChoice{}, errors.New(c.kubeconfigFlagName() + " and --fleet both name a hub: pass one of them")
	case c.kubeconfig != "":
		if !env.exists(c.kubeconfig) {
			return kubeconfigChoice{}, fmt.Errorf("%s %s: no such file", c.kubeconfigFlagName(), c.kubeconfig)
		}
		return kubeconfigChoice{paths: []string{c.kubeconfig}, origin: c.kubeconfigFlagName()}, nil
	case fleetSet:
		path := filepath.Join(c.fleet, hubKubeconfig)
		if !env.exists(path) {
			return kubeconfigChoice{}, fmt.Errorf("--fleet %s: %s does not exist; start a fleet there with `federator up --dir %s`",
				c.fleet, path, c.fleet)
		}
		return kubeconfigChoice{paths: []string{path}, origin: "--fleet " + c.fleet}, nil
	}
	if v := env.getenv(clientcmd.RecommendedConfigPathEnvVar); v != "" {
		return kubeconfigChoice{paths: filepath.SplitList(v), origin: "$KUBECONFIG"}, nil
	}
	if path := filepath.Join(defaultFleet, hubKubeconfig); env.exists(path) {
		return kubeconfigChoice{paths: []string{path}, origin: "the default --fleet " + defaultFleet}, nil
	}
	home := filepath.Join(env.home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
	if env.home != "" && env.exists(home) {
		return kubeconfigChoice{paths: []string{home}, origin: "the default kubeconfig"}, nil
	}
	return kubeconfigChoice{}, fmt.Errorf("no hub to talk to: no --kubeconfig, $KUBECONFIG is empty, there is no %s here and no %s; "+
		"pass --kubeconfig FILE or --fleet DIR (a `federator up --dir DIR` directory)", filepath.Join(defaultFleet, hubKubeconfig), home)
}

// hub is a connected hub and what commands need beside its client.
type hub struct {
	client client.Client
	// mapper resolves kinds as kubectl does, short names included.
	mapper        meta.RESTMapper
	namespace     string
	allNamespaces bool
	// config is what the client was built from (nil in tests without an
	// API server).
	config *rest.Config
	// host and kubeconfig name the hub in errors.
	host       string
	kubeconfig kubeconfigChoice
	// member returns a client for a member cluster (diff only).
	member func(ctx context.Context, cluster *clusterv1alpha1.Cluster) (client.Client, error)
	// now is this machine's clock (ages); hubNow is the hub's as of its
	// latest answer, which stamps requests (false before any answer).
	now    func() time.Time
	hubNow func() (time.Time, bool)
}

// connect builds the hub client the flags describe. It does not call the
// hub: the first request says whether it answers.
func connect(c connection) (*hub, error) {
	cc, choice, err := clientConfig(c)
	if err != nil {
		return nil, err
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", choice, err)
	}
	namespace := c.namespace
	if namespace == "" {
		if namespace, _, err = cc.Namespace(); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", choice, err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "federator-cli"
	// A command makes a handful of requests; client-go's 5/s would only
	// slow down `get rollout --watch` on a large hub.
	cfg.QPS, cfg.Burst = 50, 100
	clock := &hubClock{}
	cfg.Wrap(clock.wrap)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", choice, err)
	}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), dc, func(string) {})
	hubClient, err := client.New(cfg, client.Options{Scheme: policy.NewScheme(), Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", choice, err)
	}
	return &hub{client: hubClient, mapper: mapper, namespace: namespace, allNamespaces: c.allNamespaces,
		config: cfg, host: cfg.Host, kubeconfig: choice, member: memberClient(hubClient), now: time.Now,
		hubNow: clock.now}, nil
}

// clientConfig is the kubeconfig the flags choose, with the --context
// they name.
func clientConfig(c connection) (clientcmd.ClientConfig, kubeconfigChoice, error) {
	fleetSet := c.flags != nil && c.flags.Changed("fleet")
	choice, err := chooseKubeconfig(c, fleetSet, osEnvironment())
	if err != nil {
		return nil, choice, err
	}
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: choice.paths}
	if len(choice.paths) == 1 {
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: choice.paths[0]}
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.context}), choice, nil
}

// restConfig is the hub's config as the flags say, for a command that
// watches the hub rather than asks it.
func restConfig(c connection) (*rest.Config, kubeconfigChoice, error) {
	cc, choice, err := clientConfig(c)
	if err != nil {
		return nil, choice, err
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, choice, fmt.Errorf("kubeconfig %s: %w", choice, err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "federator-cli"
	return cfg, choice, nil
}

// memberClient reaches a member as the hub's controllers do: with the
// token and CA bundle its Cluster's secretRef names.
func memberClient(hubReader client.Reader) func(context.Context, *clusterv1alpha1.Cluster) (client.Client, error) {
	return func(ctx context.Context, cluster *clusterv1alpha1.Cluster) (client.Client, error) {
		cfg, err := membership.Config(ctx, hubReader, cluster)
		if err != nil {
			return nil, err
		}
		cfg.UserAgent = "federator-cli"
		return client.New(cfg, client.Options{Scheme: policy.NewScheme()})
	}
}
