# federator — build, generate, test.
# `make test` is the one command that runs every test (unit + end-to-end on a
# local fleet of real API servers). Binaries the fleet runs are built from the
# Go module proxy into bin/ once and reused.

SHELL := /bin/bash
BIN := $(CURDIR)/bin
KUBE_VERSION := v1.34.1
KUBE_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=34 \
	-X k8s.io/component-base/version.gitTreeState=clean
CONTROLLER_GEN_VERSION := v0.19.0
STATICCHECK_VERSION := v0.8.2

export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: all build install binaries manifests test unit e2e bench up vet fmt clean

all: build binaries

build: $(BIN)/federator

$(BIN)/federator: $(shell find cmd apis pkg -name '*.go' 2>/dev/null) go.mod go.sum
	go build -o $@ ./cmd/federator

# Install federator, and kubectl-federator beside it so that kubectl finds
# it as a plugin (`kubectl federator get rollout`), into INSTALL_DIR: Go's
# bin directory unless told otherwise (make install INSTALL_DIR=/usr/local/bin).
INSTALL_DIR ?= $(shell go env GOPATH)/bin
install: build
	install -d $(INSTALL_DIR)
	install -m 0755 $(BIN)/federator $(INSTALL_DIR)/federator
	ln -sf federator $(INSTALL_DIR)/kubectl-federator

# Fleet binaries: kube-apiserver, etcd, kube-controller-manager and
# kube-scheduler, built from hack/tools (pinned to the Kubernetes version of
# client-go), the kubectl that the commands `federator up` prints use, and
# kwok (hack/kwok, a module of its own), which plays the kubelets of the
# members' simulated nodes. The version is stamped so Cluster status reports
# a real version, not v0.0.0-master.
binaries: $(BIN)/kube-apiserver $(BIN)/etcd $(BIN)/kube-controller-manager $(BIN)/kube-scheduler $(BIN)/kubectl $(BIN)/kwok

$(BIN)/kube-apiserver: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(BIN)/kube-controller-manager: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-controller-manager

$(BIN)/kube-scheduler: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-scheduler

$(BIN)/kwok: hack/kwok/go.mod
	cd hack/kwok && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o $@ sigs.k8s.io/kwok/cmd/kwok

$(BIN)/kubectl: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kubectl

$(BIN)/etcd: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o $@ go.etcd.io/etcd/server/v3

# Node binaries of the kind node image (make kind-image), not of the local
# fleet: built the same way, from the same module.
$(BIN)/kubelet: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kubelet

$(BIN)/kubeadm: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kubeadm

$(BIN)/kube-proxy: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-proxy

# CRDs for the Karmada API types the hub serves, generated from Karmada's Go
# types in the module cache.
manifests:
	hack/gen-crds.sh $(CONTROLLER_GEN_VERSION)

vet:
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

# Unit tests (with hack/'s own programs, such as the workload image's
# server), plus pkg/fleet's tests, which start real API servers.
unit: binaries
	go test ./apis/... ./config/... ./internal/... ./pkg/... ./cmd/... ./hack/... ./test/framework/...

# FLEET=kind runs the suite on kind clusters (README: kind fleets); the
# default is the local fleet, which needs no Docker.
e2e: binaries build
	go test ./test/e2e/ -timeout 40m -v -ginkgo.v -ginkgo.no-color

test: vet unit e2e

# Benchmarks of the hot pure paths (placement, policy matching, manifests,
# Work and member write decisions). They print figures, they assert no timing.
# BENCHTIME=200ms for a quick look, BENCH=Place to run some only.
BENCHTIME ?= 1s
BENCH ?= .
bench:
	@echo "bench: per call of each hot path: ns/op = time, B/op = bytes allocated, allocs/op = heap allocations (extra columns: input sizes); figures only, nothing asserted (benchtime $(BENCHTIME)); not run here: make bench-scale (hub writes, latency and memory on a real local fleet, several minutes)"
	go test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime=$(BENCHTIME) ./pkg/...

# Scale benchmark on a real local fleet (hub + 2 members, controllers in the
# test process): for 50 and 200 Deployments, seconds to propagate and to
# resume, hub API server writes per template (from its apiserver_request_total),
# hub writes while settled, and the controllers' RSS. Run once per size; the
# breakdown by resource is in the -v log. Takes several minutes.
# Propagation at the speed of the members: a fresh local fleet, M
# Deployments on K members through federator (run as its own process)
# against a client-go program writing the same objects straight to the
# members, in the same run; then suspend → update → resume. One table of
# figures (ratios to the direct baseline, hub writes per template, CPU,
# peak RSS); asserts only that everything arrived and nothing changed while
# suspended. BENCH_FLEET_ARGS="--members 10 --resources 2000", "-o json".
BENCH_FLEET_ARGS ?=
.PHONY: bench-fleet
bench-fleet: binaries build
	go run ./test/scale/benchfleet $(BENCH_FLEET_ARGS)

# What an idle local fleet costs: `federator up` with MEMBERS members (and
# FOOTPRINT_ARGS, e.g. --workloads=false), then its startup time, total RSS
# and PSS by program, and idle CPU over a minute; stops it. Figures only.
MEMBERS ?= 20
FOOTPRINT_ARGS ?=
.PHONY: fleet-footprint
fleet-footprint: binaries build
	BIN=$(BIN) hack/fleet-footprint.sh --members $(MEMBERS) $(FOOTPRINT_ARGS)

.PHONY: bench-scale
bench-scale: binaries
	go test ./test/scale/ -run '^$$' -bench . -benchtime=1x -timeout 30m -v

# The hold invariant under random operations and faults (test/chaos): a
# seeded sequence of template changes, suspensions and resumes by every
# annotation and spec.suspension, policy deletions and re-creations, with
# the controller SIGKILLed and member API servers frozen in between; every
# version a member stores is checked against what the user had written,
# and every member must converge after a final resume. Prints its seed;
# SEED=N replays the same operations and faults in the same order (their
# timing against the controllers varies, so a race may take a few
# replays). Not part of `make test`. CHAOS_ARGS: more flags (--self-test,
# --faults=pause-member to leave the kills out, --grace 2s, --history FILE,
# --controller-log FILE).
SEED ?= 0
STEPS ?= 100
CHAOS_ARGS ?=
.PHONY: chaos
chaos: build
	go run ./test/chaos --seed $(SEED) --steps $(STEPS) $(CHAOS_ARGS)

# Start a local fleet (hub + 3 members) with the sample staged rollout applied.
up: build binaries
	$(BIN)/federator up --members 3 --dir $(CURDIR)/.fleet --sample

clean:
	rm -rf $(BIN) .fleet

# A fleet of kind clusters (hub + KIND_MEMBERS members) where Docker allows
# privileged containers; `federator up --provider kind` says what is missing
# where it does not. kind-down deletes what a killed kind-up left.
KIND_MEMBERS ?= 2
.PHONY: kind-up kind-down workload-image kind-image kind-image-verify
kind-up: build
	hack/kind-up.sh $(KIND_MEMBERS)

kind-down:
	hack/kind-down.sh

# The kind node image federator/kind-node:v1.34.1, built with no registry
# (Debian packages by debootstrap, everything else from the Go module proxy;
# README: kind fleets). It builds on any Docker, but a node starts only where
# Docker allows privileged containers, which this project's build machines
# do not: so neither .ci/run nor `make test` builds it. make kind-image-verify
# checks a built image with unprivileged throwaway containers.
kind-image:
	hack/kind-node-image.sh

kind-image-verify:
	hack/kind-node-image.sh --verify

# The workload images of kind fleets, FROM scratch around one static server
# (hack/workload-image): federator/web:1.25 and federator/web:1.27-broken,
# whose readiness fails; checked with ordinary containers once built. A kind
# fleet loads them into every member when Docker has them.
workload-image:
	hack/workload-image/build.sh
