package fleet

import "k8s.io/client-go/rest"

// Endpoint is how one cluster of a running fleet is reached, whichever
// provider started it.
type Endpoint struct {
	Name string // "hub", "member1", ...
	// Config holds admin (system:masters) credentials.
	Config *rest.Config
	// KubeconfigPath is the kubeconfig written for the cluster: DIR/<Name>.kubeconfig.
	KubeconfigPath string
}

// Running is a started fleet, whichever provider started it: the local
// fleet (Fleet) or kind clusters (pkg/kindfleet). It is what `federator up`
// and the e2e framework need to register members and run the controllers.
type Running interface {
	// Endpoints are the hub and the members, in order member1..N.
	Endpoints() (hub Endpoint, members []Endpoint)
	// Stop removes everything the provider started; a second call does nothing.
	Stop() error
}

var _ Running = (*Fleet)(nil)

// Endpoints returns how to reach the hub and each member.
func (f *Fleet) Endpoints() (Endpoint, []Endpoint) {
	endpoint := func(c *Cluster) Endpoint {
		return Endpoint{Name: c.Name, Config: c.Config, KubeconfigPath: c.KubeconfigPath}
	}
	members := make([]Endpoint, len(f.Members))
	for i, m := range f.Members {
		members[i] = endpoint(m)
	}
	return endpoint(f.Hub), members
}
