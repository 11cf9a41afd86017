# Gatewall — Kubernetes Gateway API controller with an NGINX data plane.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

export GOTOOLCHAIN := local
# Go (and hack/) need HOME; when it is unset, use the user's home from the
# password database, else bin/.home.
ifeq ($(strip $(HOME)),)
export HOME := $(or $(shell getent passwd "$$(id -u)" | cut -d: -f6),$(CURDIR)/bin/.home)
endif
BIN := $(CURDIR)/bin
export KUBEBUILDER_ASSETS := $(BIN)
export PATH := $(BIN):$(PATH)

CONTROLLER_GEN_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.8.2
GOLANGCI_LINT_VERSION ?= v2.15.0
IMG ?= ghcr.io/gatewall/gatewall:latest
DATAPLANE_IMG ?= ghcr.io/gatewall/dataplane:edge
# The WAF data-plane image (build/dataplane-waf): F5's App Protect module needs
# the certificate and key of an F5 NGINX subscription to be built.
DATAPLANE_WAF_IMG ?= ghcr.io/gatewall/dataplane-waf:edge
NGINX_REPO_CRT ?= nginx-repo.crt
NGINX_REPO_KEY ?= nginx-repo.key
KUBECTL ?= kubectl
CONTAINER_TOOL ?= docker
# The real-node suites (test/e2e) run longer than go test's default 10 minutes.
GO_TEST_FLAGS ?= -count=1 -timeout 45m

CONTROLLER_GEN := $(BIN)/controller-gen
KUSTOMIZE := $(BIN)/kustomize
GOLANGCI_LINT := $(BIN)/golangci-lint
# The Helm chart: `make manifests` copies the CRDs and config/rbac's rules and
# admission policies into it, so that it and config/default never drift.
CHART := charts/gatewall
CHART_RBAC := role.yaml leader_election_role.yaml metrics_reader_role.yaml dataplane_policy.yaml

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Toolchain (built from the Go module proxy and Debian's packages, cached in bin/)
#
# Each tool is built once per version into a cache outside the clone,
# ${GATEWALL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gatewall}/<tool>-<version>/,
# and bin/<tool> is a symlink into it: a fresh clone on a machine that built the
# tools before is ready in seconds, and changing a version (below, or in the
# hack/ script) builds the new one beside the old. Deleting the cache leaves
# dangling links in bin/ that the next `make tools` rebuilds. A build holds a
# lock per tool and version, so `make -j` and clones sharing the cache build
# each tool once.

.PHONY: tools
tools: $(CONTROLLER_GEN) $(KUSTOMIZE) $(GOLANGCI_LINT) helm envtest-tools local-tools nginx test-servers ## Build or link every tool the tests need.

.PHONY: envtest-tools
envtest-tools: ## kube-apiserver and etcd for envtest.
	@hack/kube.sh kube-apiserver
	@hack/etcd.sh

.PHONY: local-tools
local-tools: ## The local runtime: Kubernetes (control plane, kubelet, kube-proxy, kubectl), containerd, CNI, CoreDNS, image tools.
	@hack/node-packages.sh
	@hack/kube.sh kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
	@hack/echo-basic.sh
	@hack/coredns.sh
	@hack/pause.sh
	@hack/base-image.sh

$(CONTROLLER_GEN): Makefile
	@hack/go-tool.sh controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen $(CONTROLLER_GEN_VERSION)

$(KUSTOMIZE): Makefile
	@hack/go-tool.sh kustomize sigs.k8s.io/kustomize/kustomize/v5 $(KUSTOMIZE_VERSION)

$(GOLANGCI_LINT): Makefile
	@hack/go-tool.sh golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint $(GOLANGCI_LINT_VERSION)

.PHONY: helm
helm: ## Helm v3 (renders and installs charts/gatewall: the chart's tests, make run-local INSTALL=helm).
	@hack/helm.sh

.PHONY: test-servers
test-servers: nginx ## What integration tests run: versitygw (plays PLM storage), the App Protect test double, nginx-agent.
	@hack/versitygw.sh
	@hack/apstub.sh
	@hack/nginx-agent.sh

.PHONY: nginx
nginx: ## Install Debian's NGINX when missing.
	@hack/nginx.sh

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC from the API types and markers, and copy them (with config/rbac's other rules and admission policies) into the chart.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/gateway/..." paths="./internal/controller/..." paths="./internal/dataplane/..." paths="./internal/policy/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) crd paths="./api/plm/..." output:crd:artifacts:config=config/plm/crd
	rm -f $(CHART)/crds/*.yaml $(CHART)/files/*.yaml
	cp config/crd/bases/*.yaml $(CHART)/crds/
	cp $(addprefix config/rbac/,$(CHART_RBAC)) $(CHART)/files/

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: verify-generated
verify-generated: $(CONTROLLER_GEN) ## Fail when regenerating would change the generated files (the tree is not modified).
	@CONTROLLER_GEN=$(CONTROLLER_GEN) hack/verify-generated.sh

.PHONY: fmt
fmt: ## go fmt.
	go fmt ./...

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: build
build: ## Build the manager binary.
	go build -o $(BIN)/gatewall ./cmd

##@ Images

.PHONY: image-binaries
image-binaries: ## Build the binaries the Dockerfiles copy into bin/linux/amd64/ (the tools they copy must be built: make tools).
	@hack/image-binaries.sh

.PHONY: images
images: tools image-binaries ## Build every image (manager, data plane, the local runtime's and the tests') with buildah into bin/images/.
	go run ./cmd/gatewall-local images

.PHONY: docker-build
docker-build: ## Build the manager image IMG and the data-plane image DATAPLANE_IMG with a Docker engine.
	@hack/nginx-agent.sh
	@hack/image-binaries.sh gatewall gatewall-endpoints nginx-agent
	$(CONTAINER_TOOL) build -f build/manager/Dockerfile -t $(IMG) .
	$(CONTAINER_TOOL) build -f build/dataplane/Dockerfile -t $(DATAPLANE_IMG) .

.PHONY: docker-build-waf
docker-build-waf: ## Build the WAF data-plane image DATAPLANE_WAF_IMG with BuildKit (F5's NGINX_REPO_CRT and NGINX_REPO_KEY as build secrets; docs/waf.md).
	@hack/nginx-agent.sh
	@hack/image-binaries.sh nginx-agent
	DOCKER_BUILDKIT=1 $(CONTAINER_TOOL) build -f build/dataplane-waf/Dockerfile \
		--secret id=nginx-repo-crt,src=$(NGINX_REPO_CRT) --secret id=nginx-repo-key,src=$(NGINX_REPO_KEY) \
		-t $(DATAPLANE_WAF_IMG) .

.PHONY: docker-push
docker-push: ## Push IMG and DATAPLANE_IMG.
	$(CONTAINER_TOOL) push $(IMG)
	$(CONTAINER_TOOL) push $(DATAPLANE_IMG)

.PHONY: run-local
# INSTALL=helm installs Gatewall with charts/gatewall (helm upgrade --install)
# instead of config/default's kustomize output.
INSTALL ?= kustomize
run-local: run-images $(if $(filter helm,$(INSTALL)),helm) ## Run Gatewall in a local single-node cluster with the sample, served through real NGINX (needs root; INSTALL=helm installs with the chart).
	go build -o $(BIN)/gatewall-local ./cmd/gatewall-local
	$(BIN)/gatewall-local -install=$(INSTALL)

# RUN_BINARIES are what the images make run-local starts copy in: the
# manager, the data plane's endpoints client and agent, the sample's
# backend and the local runtime's CoreDNS and pause.
RUN_BINARIES := gatewall gatewall-endpoints nginx-agent echo-basic coredns pause

.PHONY: run-images
run-images: envtest-tools local-tools ## Only what make run-local needs: the local runtime's tools, nginx-agent, and the product's, runtime's and sample's images (not the tests' tools and images).
	@hack/nginx-agent.sh
	@hack/image-binaries.sh $(RUN_BINARIES)
	go run ./cmd/gatewall-local images -run-only

.PHONY: run
run: ## Run the manager against the cluster in $KUBECONFIG.
	go run ./cmd --leader-elect=false

##@ Test

.PHONY: test
test: images verify-generated lint ## Build the toolchain and the images, lint, then run every test (with the core conformance tests).
	go test $(GO_TEST_FLAGS) ./...

# UNIT_PKGS are the packages whose tests need neither the images nor the
# local cluster, nor root: the pure core, the renderer and its goldens
# (checked by real `nginx -t`, which runs in a user namespace of the
# caller's own when not root), the manager's envtest suites (kube-apiserver
# and etcd from bin/). Run without root, the two tests that serve traffic
# through NGINX's network namespace skip, saying so; make test runs as root
# and runs them, with everything else.
UNIT_PKGS ?= ./api/... ./cmd/... ./internal/... ./test/confcheck/... ./test/snapgen/... ./test/certgen/... ./test/ngf/...

# INTEGRATION_PKGS are the packages whose tests run real parts but no
# images and no cluster: envtest suites (the manager, CEL, admission, the
# parity of its statuses with render's), real NGINX serving traffic (the
# Lua balancer, connection budgets), the agent protocol with a real
# nginx-agent, PLM storage on a real S3 server, the WAF fetcher. Tests that
# serve through NGINX's network namespace or the agent's mount namespace
# need root, and say so.
INTEGRATION_PKGS ?= ./test/envtest/... ./test/manager/... ./test/balancer/... ./test/connbudget/... ./test/plm/... ./test/agent/... ./test/waf/... ./test/latecrds/...

.PHONY: unit-tools
unit-tools: envtest-tools nginx ## What make unit needs: kube-apiserver and etcd (built as you, cached), Debian's NGINX and the App Protect test double (installed with apt-get when missing: root, once).
	@hack/apstub.sh

.PHONY: unit
unit: unit-tools ## The fast tests: no images, no cluster, no root (about two minutes with a warm build cache).
	go test $(UNIT_PKGS)

.PHONY: integration
integration: unit-tools test-servers helm ## Real parts without images or a cluster: envtest, real NGINX, nginx-agent, an S3 server (root for the tests that join namespaces).
	go test $(GO_TEST_FLAGS) $(INTEGRATION_PKGS)

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint with the linters .golangci.yml names and says why (go vet among them), and gofmt/goimports.
	$(GOLANGCI_LINT) run ./...

.PHONY: golden
golden: nginx ## Rewrite internal/render's golden outputs (testdata/*.out.yaml) from their inputs; review the diff.
	go test ./internal/render -run '^TestGolden$$' -count=1 -args -update

CONFORMANCE_REPORTS ?= docs/conformance
CONFORMANCE_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
CONFORMANCE_CHANNELS ?= standard experimental

.PHONY: conformance
conformance: images ## Run the Gateway API conformance suite with every claimed feature on the local runtime, once per channel's CRDs; write the reports (needs root).
	for ch in $(CONFORMANCE_CHANNELS); do \
		go test $(GO_TEST_FLAGS) -timeout 90m -v ./test/conformance -run TestConformance -args \
			-channel $$ch -extended -report-output $(CURDIR)/$(CONFORMANCE_REPORTS)/report-$$ch.yaml -version $(CONFORMANCE_VERSION) \
			| tee $(CURDIR)/.conformance-$$ch.log | grep -E '^(=== RUN|--- |\s+--- |PASS|FAIL|ok )' || exit 1; \
	done

# The sizes of the control/data-plane design's performance goals (issue 13).
SCALE_FLAGS ?= -scale.routes=5000 -scale.certs=64 -scale.policies=50 -scale.samples=20 -scale.churn=5m -scale.unchanged=100 -scale.fanout=20 -scale.pods=100 -scale.pod-churn=5m
SCALE_REPORT ?= bin/scale-report.md

.PHONY: scale
scale: images ## Measure Gatewall at the design's sizes on the local runtime; print the summary table and write it to SCALE_REPORT (needs root).
	go test -count=1 -timeout 90m -v ./test/scale -run TestScale -args $(SCALE_FLAGS) -scale.report=$(CURDIR)/$(SCALE_REPORT) -scale.profile=$(CURDIR)/bin/scale-manager.cpu.pprof -scale.churn-profile=$(CURDIR)/bin/scale-churn.cpu.pprof -scale.pod-churn-profile=$(CURDIR)/bin/scale-pod-churn.cpu.pprof

# The data path's own cost (issue 41): Gatewall's NGINX beside a hand-written
# one, interleaved; see docs/benchmarks.md.
DATAPATH_FLAGS ?= -datapath.rounds=5 -datapath.duration=3s
DATAPATH_REPORT ?= bin/datapath-report.md

.PHONY: datapath
datapath: nginx ## Measure Gatewall's NGINX against a hand-written NGINX (and each factor of the difference, and the local load balancer's hop) with 16 keep-alive clients; print the table and write it to DATAPATH_REPORT (needs root; about 11 minutes; add -datapath.configs=as-before,lb to DATAPATH_FLAGS for the headline only).
	go test -count=1 -timeout 60m -v ./test/datapath -run TestDataPathCost -args $(DATAPATH_FLAGS) -datapath.report=$(CURDIR)/$(DATAPATH_REPORT)

##@ Deployment

.PHONY: install
install: $(KUSTOMIZE) ## Install the CRDs into the cluster in $KUBECONFIG.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: $(KUSTOMIZE) ## Remove the CRDs from the cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

# The image is set in a scratch copy of config/: deploying never modifies tracked files.
.PHONY: deploy
deploy: $(KUSTOMIZE) ## Deploy Gatewall (namespace, CRDs, RBAC, manager image IMG) with kustomize.
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	cp -R config "$$tmp/config"; \
	(cd "$$tmp/config/manager" && $(KUSTOMIZE) edit set image controller=$(IMG)); \
	$(KUSTOMIZE) build "$$tmp/config/default" | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) ## Remove what deploy installed.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found -f -
