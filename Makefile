# symposium-pm: the SDK, the PMs and the harness, as one Go workspace (go.work).
# Every target works from a fresh clone; see README.md.

GO       ?= go
MODULES  := $(patsubst %/go.mod,%,$(wildcard */go.mod))
CMDS     := $(patsubst %,./%/...,$(wildcard */cmd))
BIN      := $(CURDIR)/bin
FUZZTIME ?= 10s
BENCHTIME ?= 1s

.PHONY: all build test oracle race lint release-check vet bench demo fuzz install clean

all: build

## build: every binary into ./bin. Binaries are built as releases are, with
## cgo off (CGO_ENABLED=0; override with make build BUILD_CGO=1): statically
## linked, a PM starts without the dynamic loader, 1.3-2.5 ms less on every
## hook on a 2-core machine, and nothing here needs C.
BUILD_CGO ?= 0
build:
	@mkdir -p $(BIN)
	CGO_ENABLED=$(BUILD_CGO) $(GO) build -o $(BIN)/ $(CMDS)

## test: go test over every module's packages in one go command (the go
## command schedules them all together, so one slow package does not hold up
## the others), including the testscript scenarios; every package runs even
## when another fails, and every failure is listed. go test runs the whole go
## vet suite on each package first (-vet=all: one vet pass instead of go vet
## and go test's own subset). The oracle tests, named TestOracle* (our parsers
## and PMs against real cargo, npm, pnpm, yarn and pip, and installs by real
## go, cargo and npm, over many inputs: minutes of CPU), are left to make
## oracle; make test keeps, per fake registry, a quick test in which the real
## client talks to it. -trimpath keeps source paths out of what go compiles,
## so a fresh clone anywhere on the machine reuses the compiled packages and
## test binaries of the build cache; -count=1 still runs every test (no
## result is taken from the test cache). TESTP test binaries run at once: more
## than the cores, since several packages spend most of their time waiting on
## PM processes
## Packages are listed longest-running first, then every module, as go test
## starts them roughly in the order given (a package listed twice runs once).
## The order is each package's go test wall time measured alone on a loaded
## 2-core machine (load 7-10): the scenarios (90 s; 75 s and 66 s of CPU
## at load 2-3), npmpm's real npm, pnpm and yarn runs (75 s), gitregistry's
## git registries and pypipm's real venvs and pip runs (about 100 s each
## before their tests were trimmed to 34 s and 29 s alone at load 2-3, 33 s
## and 19 s of CPU; about 70 s at load 7-10 by the same ratio), the
## conformance campaign of sdk/pmtest (55 s), the fixture's fault campaigns
## (35 s), gitcache's git work (30 s), then the rest (under 20 s each).
SLOWEST  := ./testscript/... ./pm-npm/npmpm ./pm-gitregistry/gitregistry ./pm-pypi/pypipm \
	./sdk/pmtest ./pm-fixture/... ./pm-gitregistry/internal/gitcache ./pm-cargo/cargopm \
	./sdk/host/cli ./pm-pypi/internal/fakeindex ./sdk/host/acquire
PKGS     := $(SLOWEST) $(patsubst %,./%/...,$(MODULES))
## TESTPARALLEL parallel tests (t.Parallel: the scenarios, the conformance
## campaigns) run at once in each package, instead of go test's default of
## one per core, for the same reason. TESTTIMEOUT bounds each package: the
## scenarios take minutes of a loaded machine, near go test's default of 10.
TESTP    ?= 4
TESTPARALLEL ?= 4
TESTTIMEOUT ?= 30m
ORACLE   := ^TestOracle
test:
	$(GO) test -p $(TESTP) -parallel $(TESTPARALLEL) -timeout $(TESTTIMEOUT) -count=1 -trimpath -vet=all -ldflags=-w -skip '$(ORACLE)' $(TESTFLAGS) $(PKGS)

## oracle: the TestOracle* tests make test leaves out, in the packages that
## have them; CI runs it after race. -short (make race) skips most of them
ORACLE_PKGS = $(sort $(patsubst %/,./%,$(dir $(shell grep -rl --include='*_test.go' '^func TestOracle' $(MODULES)))))
oracle:
	$(GO) test -run '$(ORACLE)' -timeout 30m $(TESTFLAGS) $(ORACLE_PKGS)

## race: go test -race -short in every module (CI runs it after test): every
## package's tests under the race detector, the testscript scenarios with the
## host and the PMs race-built. -short skips only the oracle and simulation
## tests that drive cargo, npm, pnpm or yarn for minutes (each
## says so; test runs them). Each module runs even when an earlier one fails
## and prints its time; RACEFLAGS adds flags (e.g. -p 1 on a small machine)
race: build
	@failed=""; for m in $(MODULES); do \
		echo "== race $$m"; start=$$(date +%s); \
		(cd $$m && $(GO) test -race -short -timeout 30m $(RACEFLAGS) ./...) || failed="$$failed $$m"; \
		echo "== race $$m: $$(( $$(date +%s) - start ))s"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED in:$$failed"; exit 1; fi

## lint: staticcheck in every module and deadcode over the workspace, with
## the tools pinned and installed into ./bin/tools (see scripts/lint.sh)
lint:
	scripts/lint.sh

## release-check: the go-install release simulation (every module through a
## file GOPROXY, every binary installed with go install @version); minutes
release-check:
	cd sdk && SYMPOSIUM_RELEASE_CHECK=1 $(GO) test -run '^TestRelease$$' -count=1 -timeout 30m ./internal/release/

## bench: every benchmark, side by side, into bench/report.md
bench: build
	scripts/bench.sh $(BENCHTIME)

## demo: discovery across the example workspace's PMs, offline
demo: build
	scripts/demo.sh

## fuzz: each fuzz target for FUZZTIME
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

## install: every binary into GOBIN (or GOPATH/bin), built as make build
## builds them
install:
	CGO_ENABLED=$(BUILD_CGO) $(GO) install $(CMDS)

clean:
	rm -rf $(BIN)
