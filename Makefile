# symposium-pm: the SDK, the PMs and the harness, as one Go workspace (go.work).
# Every target works from a fresh clone; see README.md.

GO       ?= go
MODULES  := $(patsubst %/go.mod,%,$(wildcard */go.mod))
CMDS     := $(patsubst %,./%/...,$(wildcard */cmd))
BIN      := $(CURDIR)/bin
FUZZTIME ?= 10s
BENCHTIME ?= 1s

.PHONY: all build test vet bench demo fuzz install clean

all: build

## build: every binary into ./bin
build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ $(CMDS)

## test: go vet and go test in every module, including the testscript scenarios
test: build
	@set -e; for m in $(MODULES); do \
		echo "== $$m"; \
		(cd $$m && $(GO) vet ./... && $(GO) test ./...); \
	done

## bench: every benchmark, side by side, into bench/report.md
bench: build
	scripts/bench.sh $(BENCHTIME)

## demo: discovery across the example workspace's PMs, offline
demo: build
	scripts/demo.sh

## fuzz: each fuzz target for FUZZTIME
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

## install: every binary into GOBIN (or GOPATH/bin)
install:
	$(GO) install $(CMDS)

clean:
	rm -rf $(BIN)
