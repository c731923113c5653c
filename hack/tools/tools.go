//go:build tools

// Package tools pins the binaries the local fleet builds: kube-apiserver,
// kube-controller-manager, kube-scheduler (members that run workloads) and
// etcd, at the Kubernetes version of client-go,
// and the kubectl that the commands `federator up` prints run; and the
// kubelet, kubeadm and kube-proxy that the kind node image
// (hack/kind-node-image.sh) carries.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
