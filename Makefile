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
# What `federator version` prints and the image is tagged with: the nearest
# tag, commits since and -dirty (or the commit alone when no tag exists).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
FEDERATOR_LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
CONTROLLER_GEN_VERSION := v0.19.0
STATICCHECK_VERSION := v0.8.2

export KUBEBUILDER_ASSETS := $(BIN)
# Every build here is pure Go, as the image's and the fleet's programs are:
# one set of compiled packages serves bin/federator, the tests, vet and
# Karmada's suite, and bin/federator is static, so the e2e suite's Docker
# spec puts it in the image (FROM scratch) instead of compiling it again.
export CGO_ENABLED := 0

.PHONY: all build image install binaries manifests kustomizations docs test unit e2e bench up vet fmt clean

all: build binaries

build: $(BIN)/federator

$(BIN)/federator: $(shell find cmd apis internal pkg config \( -name '*.go' -o -name '*.yaml' \) 2>/dev/null) go.mod go.sum $(BIN)/.version
	go build -ldflags '$(FEDERATOR_LDFLAGS)' -o $@ ./cmd/federator

# Changes when the version or commit does, so the binary is stamped anew.
$(BIN)/.version: FORCE
	@mkdir -p $(BIN) && echo '$(VERSION) $(COMMIT)' | cmp -s - $@ || echo '$(VERSION) $(COMMIT)' > $@

.PHONY: FORCE
FORCE:

# The image federator/federator:VERSION, FROM scratch around the static
# binary (Dockerfile), built with no base image and no registry; it then
# runs once to print its version.
IMAGE ?= federator/federator:$(VERSION)
IMAGE_DIR := $(CURDIR)/.build/image
image:
	rm -rf $(IMAGE_DIR) && mkdir -p $(IMAGE_DIR)/tmp
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w $(FEDERATOR_LDFLAGS)' -o $(IMAGE_DIR)/federator ./cmd/federator
	docker build -q -f Dockerfile -t $(IMAGE) $(IMAGE_DIR)
	docker tag $(IMAGE) federator/federator:latest  # what config/install names
	docker run --rm $(IMAGE) version

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

# The four Kubernetes programs in one go build: they share most of their
# packages, and one build compiles those once and links the four side by
# side (make -j runs it beside etcd's and kwok's builds).
KUBE_FLEET_CMDS := kube-apiserver kube-controller-manager kube-scheduler kubectl
$(addprefix $(BIN)/,$(KUBE_FLEET_CMDS)) &: hack/tools/go.mod
	mkdir -p $(BIN)
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $(BIN)/ $(addprefix k8s.io/kubernetes/cmd/,$(KUBE_FLEET_CMDS))

$(BIN)/kwok: hack/kwok/go.mod
	@mkdir -p $(BIN)
	cd hack/kwok && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o $@ sigs.k8s.io/kwok/cmd/kwok

$(BIN)/etcd: hack/tools/go.mod
	@mkdir -p $(BIN)
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o $@ go.etcd.io/etcd/server/v3

# Node binaries of the kind node image (make kind-image), not of the local
# fleet: built the same way, from the same module.
$(BIN)/kubelet: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kubelet

$(BIN)/kubeadm: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kubeadm

$(BIN)/kube-proxy: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-proxy

# The CRDs the hub serves (config/install/crds), generated from Karmada's Go
# types in the module cache and federator's (apis/), then the kustomization
# lists.
manifests:
	hack/gen-crds.sh $(CONTROLLER_GEN_VERSION)
	hack/gen-kustomizations.sh

# The kustomization.yaml of config/install/crds and config/install/admission
# listing every YAML file there (after adding or removing an admission
# policy); config/install's test fails when a list is not the directory's.
kustomizations:
	hack/gen-kustomizations.sh

# docs/cli.md, the command reference, generated from the commands' own help
# (`federator docs`), and docs/architecture.md's tables of keys (from
# apis/keys) and controllers (from pkg/hub); their tests fail when stale.
docs:
	go run ./cmd/federator docs --out docs/cli.md
	go test ./apis/keys -run TestArchitectureDocIsCurrent -count=1 -update
	go test ./pkg/hub -run TestArchitectureDocListsTheControllers -count=1 -update

vet:
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

# Unit tests (with hack/'s own programs, such as the workload image's
# server, and the chaos checker's own tests), plus pkg/fleet's tests, which
# start real API servers. internal/layout's test fails when a package's
# tests are run by no go test line here.
unit: binaries
	go test ./apis/... ./config/... ./internal/... ./pkg/... ./cmd/... ./hack/... ./test/framework/... ./test/chaos/ ./test/scale/benchfleet/

# FLEET=kind runs the suite on kind clusters (docs/kind.md); the
# default is the local fleet, which needs no Docker. E2E_PROCS Ginkgo
# processes share the specs, each with a fleet of its own (the suite
# waits on API servers far more than it computes); E2E_PROCS=1 runs them
# one after another on one fleet. E2E_ARGS adds Ginkgo flags
# (--focus '...', --label-filter ...).
E2E_PROCS ?= 3
E2E_ARGS ?=
e2e: binaries build $(BIN)/ginkgo $(BIN)/karmada-agent
	$(BIN)/ginkgo run -procs=$(E2E_PROCS) --timeout=40m -v --no-color --poll-progress-after=5m $(E2E_ARGS) ./test/e2e/

# The Ginkgo CLI, which runs a suite in parallel processes; the version of
# the library the suites use (go.mod).
.PHONY: ginkgo
ginkgo: $(BIN)/ginkgo
$(BIN)/ginkgo: go.mod go.sum
	go build -o $@ github.com/onsi/ginkgo/v2/ginkgo

# The ten-minute soak (test/e2e/workloads_soak_test.go, Label "soak"): a
# workload fleet kept busy through the hub, every Deployment Available and
# every simulated node Ready throughout. Part of `make test` (it guards the
# simulated nodes' Leases: without them it fails from about 5 minutes on).
.PHONY: soak
soak: binaries
	go test ./test/e2e/ -timeout 30m -v -ginkgo.v -ginkgo.no-color -ginkgo.label-filter=soak

# Every test: vet, unit, the e2e suite, Karmada's own e2e suite (its focus
# on suspension, propagation, priority and overrides) on a fresh hub and on
# one with Karmada's CRDs (a contract), the soak and the checker's short
# run, in stages laid out for a 2-core machine (hack/test.sh), then a
# table of each stage's time.
test:
	hack/test.sh

# The loop between commits, once bin/ is built (a few minutes): vet, unit
# and the e2e suite's smoke specs (Label "smoke": propagation, a hold that
# never leaks, a staged rollout, a deletion countdown, the CLI). make test
# before pushing: it runs everything CI runs.
.PHONY: test-fast
test-fast: binaries build $(BIN)/ginkgo
	$(MAKE) vet unit
	$(MAKE) e2e E2E_ARGS='--label-filter=smoke'

# Benchmarks of the hot pure paths (placement, policy matching, manifests,
# Work and member write decisions). They print figures, they assert no timing.
# BENCHTIME=200ms for a quick look, BENCH=Place to run some only.
BENCHTIME ?= 1s
BENCH ?= .
bench:
	@echo "bench: per call of each hot path: ns/op = time, B/op = bytes allocated, allocs/op = heap allocations (extra columns: input sizes); figures only, nothing asserted (benchtime $(BENCHTIME)); not run here: make bench-scale (hub writes, latency and memory on a real local fleet, several minutes)"
	go test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime=$(BENCHTIME) ./pkg/... ./internal/...

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
# suspended (else it exits 1). BENCH_FLEET_ARGS="--members 10 --resources 2000", "-o json".
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
# annotation, `--clusters` lists and spec.suspension, policy deletions and
# re-creations, with the controller SIGKILLed and member API servers frozen
# in between; every version a member stores is checked against what the
# user had written, and every member must converge after a final resume.
# Prints its seed, a summary and a Markdown table of its figures;
# SEED=N replays the same operations and faults in the same order (their
# timing against the controllers varies, so a race may take a few
# replays). `make test` runs a short one (chaos-short). CHAOS_ARGS: more flags (--self-test,
# --faults=pause-member to leave the kills out, --grace 2s, --history FILE,
# --controller-log FILE, --workloads for members that run workloads,
# --pull-members 1 to serve the last member in Pull mode by its own agent,
# --cluster-lists=false and the like to replay a seed recorded before an
# operation was added).
SEED ?= 0
STEPS ?= 100
CHAOS_ARGS ?=
.PHONY: chaos
chaos: build
	go run ./test/chaos --seed $(SEED) --steps $(STEPS) $(CHAOS_ARGS)

# The long run (docs/reliability.md#random-operations-and-faults-make-chaos):
# 1,000 operations (STEPS) of seed 2026 (SEED) with every fault, a settle
# every 100 (faults stopped, every hold lifted, the members' convergence
# timed), on members that run workloads (--workloads: each its own
# kube-controller-manager, kube-scheduler and kwok-simulated nodes, so real
# controllers write Deployment and Job status); ends with the summary and
# a Markdown table for the docs (operations, faults by kind, what was
# checked, violations, time to converge). CHAOS_ARGS adds flags (--history
# FILE --controller-log FILE to keep the run).
.PHONY: chaos-long
chaos-long: SEED = 2026
chaos-long: STEPS = 1000
chaos-long: build binaries
	go run ./test/chaos --seed $(SEED) --steps $(STEPS) --settle-every 100 --workloads $(CHAOS_ARGS)

# The checker's short run, part of `make test`: fixed seeds, a few dozen
# operations each, every fault (controller kills with two replicas, member
# freezes, hub and member etcd restarts, lagging informers, gate requests
# on skewed clocks: seed 146's operations open and close gates); about a
# minute per seed. CHAOS_SHORT_PULL_SEED runs with one Pull member
# (--pull-members 1: member3 served by a `federator agent`, killed and
# restarted among the faults). A violation fails it and prints the line
# that replays it.
CHAOS_SHORT_SEEDS ?= 7 31 146
CHAOS_SHORT_STEPS ?= 50
CHAOS_SHORT_PULL_SEED ?= 146
.PHONY: chaos-short
chaos-short: build binaries
	for s in $(CHAOS_SHORT_SEEDS); do \
		pull=; if [ $$s = "$(CHAOS_SHORT_PULL_SEED)" ]; then pull='--pull-members 1'; fi; \
		go run ./test/chaos --seed $$s --steps $(CHAOS_SHORT_STEPS) $$pull || exit 1; \
	done

# Go's native fuzzer over federator's parsers (docs/reliability.md#fuzzing-the-parsers-make-fuzz):
# each FuzzXxx target for FUZZTIME, one after another, then a table of
# executions and failures per target. FUZZ=Gate runs the matching targets
# only; FUZZ_PARALLEL=1 keeps to one worker. The seed corpora (f.Add and
# testdata/fuzz/) run as ordinary tests in `make unit`. Not part of `make test`.
FUZZTIME ?= 30s
FUZZ ?= .
FUZZ_PARALLEL ?=
.PHONY: fuzz
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZ='$(FUZZ)' FUZZ_PARALLEL=$(FUZZ_PARALLEL) hack/fuzz.sh

# Start a local fleet (hub + 3 members) with the sample staged rollout
# applied, and the dashboard (port 0: a free port, printed; several fleets
# may run on one machine).
DASHBOARD ?= 127.0.0.1:0
# With Debian's prometheus installed, the fleet runs one and the sample's
# canary is judged by its error ratio too (UP_PROMETHEUS= turns it off).
UP_PROMETHEUS ?= $(if $(shell command -v prometheus),--prometheus)
up: build binaries
	$(BIN)/federator up --members 3 --dir $(CURDIR)/.fleet --sample --dashboard-bind-address $(DASHBOARD) $(UP_PROMETHEUS)

clean:
	rm -rf $(BIN) .fleet

# A fleet of kind clusters (hub + KIND_MEMBERS members) in Docker where it
# allows privileged containers, else in podman (KIND_ENGINE=auto|docker|podman);
# `federator up --provider kind` says what to run for whatever is missing.
# kind-down deletes what a killed kind-up left.
KIND_MEMBERS ?= 2
KIND_ENGINE ?= auto
.PHONY: kind-up kind-down kind-e2e workload-image kind-image kind-image-verify
kind-up: build
	hack/kind-up.sh $(KIND_MEMBERS) --engine $(KIND_ENGINE)

# The kind subset of the e2e suite, one kind fleet at a time: `federator up
# --provider kind` (3 members, the sample's staged rollout on real pods),
# then the suite's fleet on kind (FLEET=kind) for a member outage and a hung
# member (paused node containers). Where kind cannot run here, every spec
# skips and says why (docs/kind.md); it builds no node image.
kind-e2e: binaries build
	go test ./test/e2e/ -timeout 40m -v -ginkgo.v -ginkgo.no-color -ginkgo.focus 'federator up --provider kind'
	FLEET=kind go test ./test/e2e/ -timeout 40m -v -ginkgo.v -ginkgo.no-color -ginkgo.focus 'a member outage|a hung member'

kind-down:
	hack/kind-down.sh

# The kind node image federator/kind-node:v1.34.1, built with no registry
# (Debian packages by debootstrap, everything else from the Go module proxy;
# docs/kind.md), in Docker; a podman fleet copies it from there. A cold build
# takes 13-28 minutes, so neither .ci/run nor `make test` builds it.
# make kind-image-verify checks a built image with unprivileged throwaway
# containers.
kind-image:
	hack/kind-node-image.sh

kind-image-verify:
	hack/kind-node-image.sh --verify

# The workload images of kind fleets, FROM scratch around one static server
# (hack/workload-image): federator/web:1.25, 1.26, 1.28 and 1.27-broken,
# whose readiness fails; checked with ordinary containers once built. A kind
# fleet loads them into every member when Docker has them.
workload-image:
	hack/workload-image/build.sh

# Karmada v1.16.0's own end-to-end suite (test/e2e/suites/base) against a
# local fleet (`federator up --members 3`), twice: on a fresh hub, and on a
# hub that has Karmada's own CRDs (charts/karmada/_crds/bases) before the
# controllers start, as a Karmada hub moving over has. The suite is built
# from the Go module cache by hack/karmada-e2e (a module of its own), its
# specs unmodified; only the framework's fixed 420s/5s poll constants, which
# have no flag, are built as 120s/1s (hack/karmada-e2e/timeouts.sh), like the
# suite's own --poll-timeout/--poll-interval. One line per spec; specs that
# cannot pass on this fleet are listed, with the reason, in docs/karmada.md
# (and hack/karmada-e2e/known-failures.txt). Reports: .karmada-e2e/.
# Poll timeout and interval in seconds (rebuild with make -B after a change).
KARMADA_E2E_POLL_TIMEOUT ?= 120
KARMADA_E2E_POLL_INTERVAL ?= 1
.PHONY: karmada-e2e
# The two runs go side by side, each on its own fleet (the suite waits on
# its polls far more than it computes); each line says which run it is of.
karmada-e2e: binaries build karmada-e2e-build
	export KARMADA_E2E_POLL_TIMEOUT=$(KARMADA_E2E_POLL_TIMEOUT)s KARMADA_E2E_POLL_INTERVAL=$(KARMADA_E2E_POLL_INTERVAL)s; \
	set -o pipefail; \
	(hack/karmada-e2e.sh --name fresh-hub 2>&1 | sed -u 's/^/[fresh-hub] /') & a=$$!; \
	(hack/karmada-e2e.sh --hub-crds "$$(cd hack/karmada-e2e && go list -m -f '{{.Dir}}' github.com/karmada-io/karmada)/charts/karmada/_crds/bases" 2>&1 | sed -u 's/^/[karmada-crds] /') & b=$$!; \
	wait $$a; a=$$?; wait $$b; b=$$?; \
	$(MAKE) --no-print-directory karmada-e2e-objects; exit $$((a | b))

# Karmada's suite writes the objects of each of its test namespaces into
# /tmp/karmada/objects, a path it fixes: they are kept with the reports
# (.karmada-e2e/objects) and nothing is left in /tmp.
.PHONY: karmada-e2e-objects
karmada-e2e-objects:
	@if [ -d /tmp/karmada/objects ]; then \
		mkdir -p $(CURDIR)/.karmada-e2e/objects && mv -f /tmp/karmada/objects/* $(CURDIR)/.karmada-e2e/objects/ 2>/dev/null; \
		rmdir /tmp/karmada/objects /tmp/karmada 2>/dev/null; true; \
	fi

# The suite's binary alone: `make test` builds it while other stages run.
.PHONY: karmada-e2e-build
karmada-e2e-build: $(BIN)/karmada-e2e $(BIN)/karmada-e2e-summary

# Karmada v1.16.0's own karmada-agent (cmd/agent), built unmodified from the
# module cache by hack/karmada-e2e's module, as Karmada's suite is: the e2e
# suite runs it as a Pull member of a federator hub (docs/pull-mode.md).
.PHONY: karmada-agent
karmada-agent: $(BIN)/karmada-agent
$(BIN)/karmada-agent: hack/karmada-e2e/go.mod hack/karmada-e2e/go.sum
	cd hack/karmada-e2e && go build -trimpath -ldflags '-s -w' -o $@ github.com/karmada-io/karmada/cmd/agent

$(BIN)/karmada-e2e: hack/karmada-e2e/go.mod hack/karmada-e2e/go.sum hack/karmada-e2e/timeouts.sh
	hack/karmada-e2e/timeouts.sh $(KARMADA_E2E_POLL_TIMEOUT) $(KARMADA_E2E_POLL_INTERVAL) $(BIN)/karmada-e2e-src
	cd hack/karmada-e2e && go test -c -modfile $(BIN)/karmada-e2e-src/go.mod -o $@ github.com/karmada-io/karmada/test/e2e/suites/base

$(BIN)/karmada-e2e-summary: hack/karmada-e2e/go.mod hack/karmada-e2e/summary/main.go
	cd hack/karmada-e2e && go build -o $@ ./summary
