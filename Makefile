# The two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
BIN       := bin/jupyter-mcp-server
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
PREFIX    ?= /usr/local
# staticcheck is pinned and fetched through the Go module proxy by `make lint`.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(shell $(GO) env GOPATH 2>/dev/null)/bin/staticcheck
# goreleaser too, by `make release-check`; v2.18+ needs a newer Go than ours.
GORELEASER_VERSION := v2.15.1
GORELEASER := $(shell $(GO) env GOPATH 2>/dev/null)/bin/goreleaser
export PATH := $(PATH):/usr/local/go/bin:$(shell $(GO) env GOPATH 2>/dev/null)/bin
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: build run test e2e bench lint staticcheck fmt golden snaps tidy-check install jupyter interop toolref fuzz cross
.PHONY: release-check goreleaser

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

# Runs the product on its embedded default: a managed local Jupyter server
# rooted at the working directory, the workbench TUI in this terminal.
run: build jupyter
	./$(BIN) $(ARGS)

install:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(DESTDIR)$(PREFIX)/bin/jupyter-mcp-server .

# Every test, including the integration tests against a real Jupyter server
# that the tests start themselves and the end-to-end tests in e2e/.
test: jupyter
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

# Only the end-to-end tests: the built binary driven over stdio, HTTP and a
# real terminal (tmux). `make test` runs them too.
e2e: jupyter
	$(GO) test -race -count=1 -timeout 15m ./e2e

# Makes sure Jupyter is there: installs it from Debian's packages when we are
# root on Debian/Ubuntu, otherwise says how.
jupyter:
	@sh scripts/ensure-jupyter.sh

bench: build jupyter
	$(GO) run ./bench -out bench.json

# go vet, staticcheck and gofmt: each must be clean.
lint: staticcheck
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@out=$$(gofmt -l . 2>/dev/null | grep -v '^vendor/'); if [ -n "$$out" ]; then echo "not gofmt-clean:"; echo "$$out"; exit 1; fi

# The platforms we ship: each must build and pass go vet (tests included).
CROSS_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64

cross:
	@for t in $(CROSS_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build ./... && \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) vet ./... || { echo "cross: $$t FAILED"; exit 1; }; \
		echo "cross: $$t built and vetted"; \
	done

# Installs the pinned staticcheck unless that version is already there.
staticcheck:
	@$(STATICCHECK) -version 2>/dev/null | grep -q '$(STATICCHECK_VERSION:v%=%)' || \
		GOFLAGS=-mod=mod $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Rewrite the workbench goldens under ui/testdata/golden.
golden:
	$(GO) test ./ui -count=1 -update

# Rewrite the tool definition snapshots under mcp/testdata/toolsnaps.
snaps:
	UPDATE_TOOLSNAPS=1 $(GO) test ./mcp -run TestToolSnapshots -count=1

toolref:
	$(GO) run ./mcp/cmd/toolref README.md

fuzz:
	sh scripts/fuzz.sh 10s

# Checks against MCP clients no one here wrote (the TypeScript SDK, the
# Inspector CLI, the conformance suite) and a real JupyterHub.
interop: build
	SKIP_BUILD=1 bash interop/run.sh

tidy-check:
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

# Validates .goreleaser.yaml, builds every release archive into dist/ as a
# snapshot (nothing is published) and lists and checks what it built.
release-check: goreleaser
	$(GORELEASER) check
	$(GORELEASER) release --snapshot --clean --skip=publish
	@bash scripts/list-release.sh dist

# Installs the pinned goreleaser unless that version is already there.
goreleaser:
	@$(GORELEASER) --version 2>/dev/null | grep -Eq '^GitVersion: *v?$(GORELEASER_VERSION:v%=%)$$' || \
		GOFLAGS=-mod=mod $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
