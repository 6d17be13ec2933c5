# hotspotkit — see README.md. Every target works on a fresh clone as root or not.
GO       ?= go
BIN      := bin
BINARIES := $(notdir $(wildcard cmd/*))
REV      := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)

.PHONY: all build test vet fmt bench pgbench baseline clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The test command of the README and of CI: formatting, vet, then every test with the race
# detector. Integration tests start their own PostgreSQL (and redis-server when installed).
test:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -race -timeout 25m ./...

# Micro-benchmarks (queue enqueue/merge/flush, load engine); recorded, never asserted.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./queue/ ./testkit/load/ ./testkit/counters/

# pgbench running the usage-counter sync transaction beside the suite's sync mode, both at
# 64 connections for 30 s on their own temporary servers.
pgbench: build
	$(BIN)/usage_counter_pgbench --max-connections 64 --duration 30s
	$(BIN)/usage_counter_hotspot_baseline --modes sync --requests 0 --duration 30s \
	  --concurrency 64 --max-connections 64 --output /tmp/hotspotkit-sync-64.json

clean:
	rm -rf $(BIN)
