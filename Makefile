# Everything a fresh Debian machine with Go and git needs is installed here.
SHELL := /bin/bash
GO ?= go
TF_VERSION := 1.5.7
BIN := $(CURDIR)/bin
TERRAFORM := $(BIN)/terraform
# staticcheck 2026.2.2, the newest release; it supports Go 1.26.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(BIN)/staticcheck-$(STATICCHECK_VERSION)/staticcheck
# conftest runs the policy check tests (--enable-policy-checks).
CONFTEST_VERSION := v0.66.0
CONFTEST := $(BIN)/conftest-$(CONFTEST_VERSION)/conftest
# helm renders and lints the chart in deploy/helm (cmd/atoll/deploy_helm_test.go).
HELM_VERSION := v3.22.0
HELM := $(BIN)/helm-$(HELM_VERSION)/helm
DATA_DIR ?= ./atoll-data
PORT ?= 4141

export GOTOOLCHAIN := local
export CHECKPOINT_DISABLE := 1

.PHONY: run test security build bench generate generated vet staticcheck clean chromium

# Terraform is built once from source (about five minutes) and reused.
$(TERRAFORM):
	mkdir -p $(BIN)
	GOBIN=$(BIN) CGO_ENABLED=0 $(GO) install github.com/hashicorp/terraform@v$(TF_VERSION)
	$(TERRAFORM) version | grep -q "v$(TF_VERSION)"

build:
	$(GO) build -o $(BIN)/atoll ./cmd/atoll

run: $(TERRAFORM) build
	$(BIN)/atoll server --demo --terraform-bin $(TERRAFORM) --data-dir $(DATA_DIR) --port $(PORT) $(ARGS)

vet:
	$(GO) vet ./...
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

# Installed from the Go module proxy at a pinned version, once.
$(STATICCHECK):
	GOBIN=$(dir $(STATICCHECK)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# Installed from the Go module proxy at a pinned version, once.
$(CONFTEST):
	GOBIN=$(dir $(CONFTEST)) $(GO) install github.com/open-policy-agent/conftest@$(CONFTEST_VERSION)

# Installed from the Go module proxy at a pinned version, once (about three
# minutes with an empty module cache). The -X flags are the ones Helm's own
# Makefile sets: its version, and the Kubernetes version `helm template`
# assumes (that of its client-go, v0.37 -> 1.37).
$(HELM):
	GOBIN=$(dir $(HELM)) CGO_ENABLED=0 $(GO) install \
		-ldflags "-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37" \
		helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	$(HELM) version --short | grep -q "^$(HELM_VERSION)"

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

# The *_templ.go files must be what the .templ files generate: templ generate
# must change nothing (compared by content, so uncommitted work is fine).
generated:
	@sums() { find . -name '*_templ.go' -not -path './bin/*' | sort | xargs -r sha256sum; }; \
	before=$$(sums); $(GO) tool templ generate || exit 1; after=$$(sums); \
	if [ "$$before" != "$$after" ]; then \
		diff <(echo "$$before") <(echo "$$after"); git diff --stat -- '*_templ.go'; \
		echo "templ generate changed the files above: run make generate and commit them" >&2; exit 1; \
	fi

# Chromium runs the browser test (cmd/atoll/browser_test.go); Debian's
# package is installed when none is on PATH (as root, or through sudo).
chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
		else echo "chromium is missing and neither root nor sudo is available to install it" >&2; exit 1; fi; \
		$$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; \
	fi
	chromium --version

test: $(TERRAFORM) $(CONFTEST) $(HELM) vet staticcheck generated chromium
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) ATOLL_TEST_CONFTEST=$(CONFTEST) ATOLL_TEST_HELM=$(HELM) ATOLL_TEST_CHROMIUM=$$(command -v chromium) $(GO) test -race -count=1 -timeout 60m ./...

# The security regression suite alone: every test named TestSecurity...
# (hostile comments, redirects, sign-in limits, revocation, approvals,
# malformed input). make test runs them with the rest.
security: $(TERRAFORM) chromium
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) ATOLL_TEST_CHROMIUM=$$(command -v chromium) $(GO) test -race -count=1 -run Security -timeout 20m ./...

# The figures in docs/performance.md.
bench: $(TERRAFORM)
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench WebhookToPlanComment -benchtime 30x -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench NewHeadToPlanComment -benchtime 20x -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench NewPullToPlanComment -benchtime 20x -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench WebhookBurst -benchtime 1x -count 3 -timeout 30m ./cmd/atoll
	$(GO) test -run '^$$' -bench HandleEvent -benchtime 5000x ./runner
	$(GO) test -run '^$$' -bench Prune -benchtime 3x ./store
	$(GO) test -run '^$$' -bench ReplicatedCommit -benchtime 200x ./replica
	$(GO) test -run '^$$' -bench ParseComment -benchtime 5x ./templates
	$(GO) test -run '^$$' -bench 'JobHistory|SearchLogs|HistoryPages' -benchtime 50x ./store ./web
	$(GO) test -run '^$$' -bench 'JobLogDownload|ChangesFanOut' -benchtime 5x ./web
	$(GO) test -run '^$$' -bench JobLogFanOut -benchtime 1x ./web
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench Failover -benchtime 50x -timeout 60m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench WorkerClaimLatency -benchtime 50x -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench WorkerLogToBrowser -benchtime 5x -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench WorkerPoolPlans -benchtime 1x -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench KubeVsPoolOverhead -benchtime 10x -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench KubePlans -benchtime 1x -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench DriftBacklogPRLatency -benchtime 1x -count 3 -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench DriftPage -benchtime 50x -count 3 -timeout 30m ./cmd/atoll

generate:
	$(GO) tool templ generate

clean:
	rm -rf $(BIN)/atoll $(DATA_DIR)
