package fleet

import (
	"fmt"

	"k8s.io/client-go/rest"
)

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

// Faults put one member of a running fleet out of service and back, so that
// tests see how the hub and the other members cope, whichever provider
// started it.
type Faults interface {
	// StopMember makes member's API server unreachable until StartMember:
	// the local fleet stops the process (connections refused); kind
	// freezes the member's nodes (requests time out), as HangMember.
	StopMember(member string) error
	StartMember(member string) error
	// HangMember freezes member's API server until ResumeMember:
	// connections are accepted, nothing answers.
	HangMember(member string) error
	ResumeMember(member string) error
}

var _ Faults = (*Fleet)(nil)

// StopMember stops member's kube-apiserver (Cluster.StopAPIServer).
func (f *Fleet) StopMember(member string) error {
	return f.memberFault(member, (*Cluster).StopAPIServer)
}

// StartMember starts it again (Cluster.StartAPIServer).
func (f *Fleet) StartMember(member string) error {
	return f.memberFault(member, (*Cluster).StartAPIServer)
}

// HangMember freezes member's kube-apiserver (Cluster.PauseAPIServer).
func (f *Fleet) HangMember(member string) error {
	return f.memberFault(member, (*Cluster).PauseAPIServer)
}

// ResumeMember lets it answer again (Cluster.ResumeAPIServer).
func (f *Fleet) ResumeMember(member string) error {
	return f.memberFault(member, (*Cluster).ResumeAPIServer)
}

func (f *Fleet) memberFault(member string, fault func(*Cluster) error) error {
	c := f.Member(member)
	if c == nil {
		return fmt.Errorf("fleet: no member %s", member)
	}
	return fault(c)
}
