# cloudnative-mysql. The two commands a newcomer needs: `make demo` and `make test`.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

CONTROLLER_GEN ?= go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.19.0
# test/instancemanager alone takes about 22 min here (1303 s in the last fresh-clone run): the
# per-package timeout leaves a slower machine room, the whole run staying under CI's hour.
GO_TEST_FLAGS ?= -count=1 -timeout 40m
BIN := bin

.PHONY: all build generate manifests verify-generated substrate images test e2e fmt vet demo demo-controlplane clean

all: build

build: ## build bin/manager and bin/kubectl-cloudnative_mysql
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/ ./cmd/...

generate: ## deepcopy functions
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

manifests: ## CRDs and RBAC under config/, the Grafana dashboard and alert rules under config/monitoring, the one-file installs under dist/, the Helm chart's generated files
	$(CONTROLLER_GEN) crd:maxDescLen=512 rbac:roleName=cloudnative-mysql-manager \
		paths=./api/... paths=./internal/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	go run ./hack/crdconditions config/crd/bases
	go run ./hack/dashboardgen
	go run ./hack/installgen

verify-generated: generate manifests ## fail when generated files differ from the checked-in ones
	@git diff --exit-code -- api config dist charts || { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config dist charts)" || { git status --porcelain -- api config dist charts; echo "untracked generated files"; exit 1; }

substrate: ## build and cache kube-apiserver, etcd, kube-controller-manager, kubectl, versitygw, helm, the MySQL root filesystem, prometheus and promtool
	bash hack/substrate.sh all

images: ## the operator and instance images as OCI archives under bin/images (IMAGES_OUT), for your registry (docs/install.md)
	bash hack/images.sh

fmt:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

vet:
	go vet ./...

# go test starts the packages in the order given, two at a time on a 2-core machine: the slowest
# ones (real mysqld scenarios, 2-15 min each) first, so that they do not start alone after every
# other package has finished.
SLOW_TEST_PACKAGES := ./test/instancemanager/ ./internal/pitr/ ./internal/instance/

test: substrate fmt vet verify-generated ## everything, installing whatever is missing
	eval "$$(bash hack/substrate.sh env)" && go test $(GO_TEST_FLAGS) $(SLOW_TEST_PACKAGES) ./...
	cd hack/tools/images && go test $(GO_TEST_FLAGS) ./...
	$(MAKE) e2e

e2e: ## end-to-end tests on a real local node (hack/localcluster.sh), started and stopped by the tests
	go vet -tags e2e ./test/e2e/
	eval "$$(bash hack/substrate.sh env)" && go test -tags e2e $(GO_TEST_FLAGS) ./test/e2e/

demo: substrate build ## a real local node, the operator as a Pod, a three-instance Cluster and its first backup
	bash hack/demo-node.sh

demo-controlplane: substrate build ## the lighter demo: control plane only, the operator as a local process
	bash hack/demo.sh

clean:
	rm -rf $(BIN)
