# Gatewall — Kubernetes Gateway API controller with an NGINX data plane.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

export GOTOOLCHAIN := local
BIN := $(CURDIR)/bin
export KUBEBUILDER_ASSETS := $(BIN)
export PATH := $(BIN):$(PATH)

CONTROLLER_GEN_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.8.2
IMG ?= ghcr.io/gatewall/gatewall:latest
KUBECTL ?= kubectl
GO_TEST_FLAGS ?= -count=1

CONTROLLER_GEN := $(BIN)/controller-gen
KUSTOMIZE := $(BIN)/kustomize

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Toolchain (built from the Go module proxy and Debian's packages, cached in bin/)

.PHONY: tools
tools: $(CONTROLLER_GEN) $(KUSTOMIZE) envtest-tools local-tools nginx test-servers ## Build or link every tool the tests need.

.PHONY: envtest-tools
envtest-tools: ## kube-apiserver and etcd for envtest.
	@hack/kube.sh kube-apiserver
	@hack/etcd.sh

.PHONY: local-tools
local-tools: ## The local runtime: kube-controller-manager, kube-scheduler, the echo backend.
	@hack/kube.sh kube-apiserver kube-controller-manager kube-scheduler
	@hack/echo-basic.sh

$(CONTROLLER_GEN): Makefile
	@hack/go-tool.sh controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen $(CONTROLLER_GEN_VERSION)

$(KUSTOMIZE): Makefile
	@hack/go-tool.sh kustomize sigs.k8s.io/kustomize/kustomize/v5 $(KUSTOMIZE_VERSION)

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
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC from the API types and markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/gateway/..." paths="./internal/controller/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) crd paths="./api/plm/..." output:crd:artifacts:config=config/plm/crd

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: verify-generated
verify-generated: manifests generate ## Fail when generated files differ from the committed ones.
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
		echo "generated files are stale; run 'make manifests generate' and commit:"; \
		git status --porcelain -- api config; git diff --stat -- api config; exit 1; fi

.PHONY: fmt
fmt: ## go fmt.
	go fmt ./...

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: build
build: ## Build the manager binary.
	go build -o $(BIN)/gatewall ./cmd

.PHONY: run-local
run-local: tools ## Run Gatewall on a local cluster with the sample, served through real NGINX (needs root).
	go run ./cmd local

.PHONY: run
run: ## Run the manager against the cluster in $KUBECONFIG.
	go run ./cmd --leader-elect=false

##@ Test

.PHONY: test
test: tools verify-generated ## Build the toolchain, then run every test (with the core conformance tests).
	go test $(GO_TEST_FLAGS) ./...

CONFORMANCE_REPORT ?= docs/conformance/report.yaml
CONFORMANCE_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: conformance
conformance: tools ## Run the Gateway API conformance suite with every claimed feature on the local runtime; write the report (needs root).
	go test $(GO_TEST_FLAGS) -timeout 90m -v ./test/conformance -run TestConformance -args \
		-extended -report-output $(CURDIR)/$(CONFORMANCE_REPORT) -version $(CONFORMANCE_VERSION) \
		| tee $(CURDIR)/.conformance.log | grep -E '^(=== RUN|--- |\s+--- |PASS|FAIL|ok )'

##@ Deployment

.PHONY: install
install: $(KUSTOMIZE) ## Install the CRDs into the cluster in $KUBECONFIG.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: $(KUSTOMIZE) ## Remove the CRDs from the cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: $(KUSTOMIZE) ## Deploy Gatewall (namespace, CRDs, RBAC, manager) with kustomize.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) ## Remove what deploy installed.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found -f -
