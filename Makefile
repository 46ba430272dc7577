# The one test command (README, .ci/run): everything a clean checkout needs.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE := golang.org/x/tools/cmd/deadcode@v0.45.0
# What deadcode may list: helpers the tests of several packages share (a
# _test.go file cannot export them) and the relay benchmark's token signer.
DEADCODE_TESTONLY := ^internal/leakcheck/|^internal/connlimit/connlimit\.go:.* Stats$$|^relay/hostpins\.go:.* Identity\.PinnedHost$$|^relay/relayserver/token\.go:.* SignTokenForTest$$|^rpc/requestlog\.go:.* ReadLog$$|^trust/store\.go:.* OpenStore$$|^internal/redact/redact\.go:.* OffForTest$$|^gate/fsmonitor\.go:.* Repo\.MonitoredStatuses$$|^rpc/caller\.go:.* Caller\.Protocol$$

.PHONY: test check deps vet darwin staticcheck unit benchcheck build

test: deps vet darwin staticcheck unit benchcheck

# The quick loop a contributor runs often: vet, and the tests in -short mode
# without the race detector. -short leaves out the browser tests, and the 3
# GiB commit and the 320 MiB pack of gate's memory bound; gh and PostgreSQL
# skip when missing.
# PKGS narrows it to what you are changing: make check PKGS=./gate/
# make test is what CI runs; run it before a push.
PKGS ?= ./...
check:
	go vet $(PKGS)
	go test -short -count=1 $(PKGS)

# Debian packages and the page's npm packages the tests use: one line each
# saying whether it was there and why the tests need it; only what is missing
# is installed (needs root or sudo for Debian's).
deps:
	@./scripts/deps.sh

vet:
	go vet ./...

# The portable paths (macOS has no openat2 or O_PATH) must keep building.
darwin:
	GOOS=darwin GOARCH=arm64 go vet ./...
	GOOS=darwin GOARCH=arm64 go build ./...

# Code the binary never reaches is deleted, used, or moved into a _test.go
# file; a test keeping a second copy of live logic green is how it rots.
staticcheck:
	go run $(STATICCHECK) ./...
	@out=$$(go run $(DEADCODE) -test=false ./cmd/gatehouse) || exit 1; out=$$(printf '%s\n' "$$out" | grep -Ev '$(DEADCODE_TESTONLY)'); \
	if [ -n "$$out" ]; then printf '%s\n' "$$out" "unreachable from ./cmd/gatehouse (deadcode): delete it, use it, or move it into a _test.go file"; exit 1; fi

# The page's tests (web/) need the browser, the GitHub tests gh, the relay
# store's tests PostgreSQL: GATEHOUSE_BROWSER_TESTS=1, GATEHOUSE_GH_TESTS=1
# and GATEHOUSE_PG_TESTS=1 make a missing piece a failure instead of a skip.
# The page's screenshots are kept in artifacts/page/.
# GATEHOUSE_REQUIRE does the same for what the machine itself must offer
# (internal/testenv): landlock, the kernel wall gate's confinement tests
# prove (Landlock ABI 4 or later), and root, which the tests that give files
# to another user, make device nodes or a network namespace need. .ci/run
# sets it to both, so CI fails where either is missing; on your own machine
# those tests skip and say why unless you set it.
# The gate's suite runs a second time with the kernel wall off, as macOS and
# kernels without Landlock run gatehouse: every attack must then be stopped
# by the gate's own rules alone.
GATEHOUSE_REQUIRE ?=
unit:
	GATEHOUSE_REQUIRE=$(GATEHOUSE_REQUIRE) GATEHOUSE_BROWSER_TESTS=1 GATEHOUSE_GH_TESTS=1 GATEHOUSE_PG_TESTS=1 GATEHOUSE_ARTIFACTS=$(CURDIR)/artifacts/page go test -race -timeout 20m ./...
	GATEHOUSE_REQUIRE=$(GATEHOUSE_REQUIRE) GATEHOUSE_KERNEL_WALL=off go test -count=1 -timeout 20m ./gate/

# Benchmarks are not judged in CI, only run once so they keep working; -short
# skips the ones that need large fixtures built outside CI.
benchcheck:
	go test -short -run '^$$' -bench . -benchtime 1x -timeout 10m ./...
	go run ./bench/relay -pairs 4 -idle 100 -seconds 0.5 > /dev/null

build:
	go build -o gatehouse ./cmd/gatehouse
