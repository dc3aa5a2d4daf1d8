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

.PHONY: run test build bench generate vet clean

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

test: $(TERRAFORM) vet
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -count=1 -timeout 60m ./...

bench: $(TERRAFORM)
	ATOLL_TEST_TERRAFORM=$(TERRAFORM) $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./...

generate:
	$(GO) tool templ generate

clean:
	rm -rf $(BIN)/atoll $(DATA_DIR)
