# Everything a fresh Debian machine with Go and git needs is installed here.
SHELL := /bin/bash
GO ?= go
TF_VERSION := 1.5.7
BIN := $(CURDIR)/bin
TERRAFORM := $(BIN)/terraform
DATA_DIR ?= ./atoll-data
PORT ?= 4141

export GOTOOLCHAIN := local
export CHECKPOINT_DISABLE := 1

.PHONY: run test build bench generate vet clean chromium

# Terraform is built once from source (about five minutes) and reused.
$(TERRAFORM):
	mkdir -p $(BIN)
	GOBIN=$(BIN) CGO_ENABLED=0 $(GO) install github.com/hashicorp/terraform@v$(TF_VERSION)
	$(TERRAFORM) version | grep -q "v$(TF_VERSION)"

build:
	$(GO) build -o $(BIN)/atoll ./cmd/atoll

run: $(TERRAFORM) build
	$(BIN)/atoll server --demo --terraform-bin $(TERRAFORM) --data-dir $(DATA_DIR) --port $(PORT)

vet:
	$(GO) vet ./...
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

# Chromium runs the browser test (cmd/atoll/browser_test.go); Debian's
# package is installed when none is on PATH (as root, or through sudo).
chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
		else echo "chromium is missing and neither root nor sudo is available to install it" >&2; exit 1; fi; \
		$$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; \
	fi
	chromium --version

test: $(TERRAFORM) vet chromium
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) ATOLL_TEST_CHROMIUM=$$(command -v chromium) $(GO) test -count=1 -timeout 60m ./...

# The figures in docs/performance.md.
bench: $(TERRAFORM)
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench WebhookToPlanComment -benchtime 30x -timeout 30m ./cmd/atoll
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench WebhookBurst -benchtime 1x -count 3 -timeout 30m ./cmd/atoll
	$(GO) test -run '^$$' -bench HandleEvent -benchtime 5000x ./runner
	$(GO) test -run '^$$' -bench Prune -benchtime 3x ./store

generate:
	$(GO) tool templ generate

clean:
	rm -rf $(BIN)/atoll $(DATA_DIR)
