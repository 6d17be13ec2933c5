# hotspotkit — see README.md. Every target works on a fresh clone as root or not.
GO       ?= go
BIN      := bin
BINARIES := $(notdir $(wildcard cmd/*))
REV      := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)

# The suites with a write path of their own (the script suite runs a script it is given: -f).
SUITES   := $(filter-out script_hotspot_baseline,$(filter %_baseline,$(BINARIES)))
BASELINE_ARGS ?= --requests 60000 --concurrency 6000 --repeat 3
BASELINE_TMP  := $(shell mktemp -d -u /tmp/hotspotkit-baseline-XXXXXX)

.PHONY: all build run test setup-run setup-test deadcode vet fmt bench pgbench baseline baseline-report faults fault-matrix soak clean

all: build

LDFLAGS  := -ldflags "-X github.com/hotspotkit/hotspotkit/testkit/internal/measure/hostenv.Revision=$(REV)"

build:
	$(GO) build $(LDFLAGS) -o $(BIN)/ ./cmd/...

# The run command of the README: PostgreSQL installed where missing (scripts/setup), the
# binaries built, then the usage-counter hot spot in all four modes, verified, sized to answer
# within a minute on a 2-core machine (sync bounded by time: it is the slow one), with its page
# of plots. RUN_ARGS to scale it up, e.g. RUN_ARGS="--requests 60000 --concurrency 6000 --repeat 3".
RUN_ARGS ?= --requests 2000 --concurrency 200 --duration 5s
RUN_OUT  ?= /tmp/hotspotkit-run
run: setup-run
	$(GO) build $(LDFLAGS) -o $(BIN)/ ./cmd/usage_counter_hotspot_baseline ./cmd/baseline
	$(BIN)/usage_counter_hotspot_baseline $(RUN_ARGS) --output $(RUN_OUT).json --html $(RUN_OUT).html

setup-run:
	scripts/setup postgres --or-download

setup-test:
	scripts/setup postgres redis pgbouncer mariadb

# The test command of the README and of CI (.ci/run): PostgreSQL, redis-server, pgbouncer and
# MariaDB installed where missing (scripts/setup), formatting, vet, dead code, then every test, under
# the race detector (docs/testing.md). Integration tests start their own servers.
#
# One build of the module, race-instrumented: go vet -race compiles what the tests then take
# from the build cache, and the tests that build a binary of the module to run it as a user
# would build it with -race too (internal/testhelp/racebuild). A second, plain build of the module and
# its dependencies would cost about a fifth of CI's time on two cores. -trimpath: baseline ab
# builds revisions with it (a worktree's path would otherwise make every package new to the
# build cache), and its test's builds then take the standard library from the tests' build
# instead of compiling it again (30 s of a fresh CI). go test's own vet pass is off
# (-vet=off): go vet has just run every check it would. The test binaries are linked without
# DWARF (-ldflags=-w): nothing reads it (a panic's trace comes from the symbol and line
# tables, which stay), and each of the ~40 race-instrumented links then takes about a
# CPU-second less (docs/testing.md).
#
# TEST_P: how many test packages run at once. go test's default is one per core, but a
# package's tests spend part of their time waiting (servers restarting, faults' windows, runs
# bounded by time), which a third package at once fills; at four they contend for the two
# cores more than they overlap (docs/testing.md, "How long it takes", has the figures).
TEST_P ?= 3

# SLOW_TESTS: the test packages that take longest, slowest first: go test starts packages in
# the order given, TEST_P at a time, and a slow one started last would finish alone while the
# cores idle; the last three are short but mostly wait (20-30 s each: servers started and
# stopped, delays timed), and would be the tail if go list's order put them last. Every other
# package follows, in go list's order.
SLOW_TESTS := ./testkit/internal/runner/engine ./testkit/suites/usagecounter ./testkit/suites/script ./testkit/suites/multiproc \
	./testkit/suites/settlement ./queue/redisq ./cmd/baseline ./testkit/suites/auxcounter \
	./testkit/suites/candidates ./testkit/suites/jobqueue ./examples/hotcounter \
	./testkit/servers/redisserver ./testkit/servers/netdelay ./testkit/servers/pgserver

# TEST_GORACE: a race-instrumented process that ends normally waits a second first (the race
# runtime's atexit_sleep_ms, 1000 by default, for reports from goroutines still running), and
# the tests end 41 test binaries and start about 150 race-built suite binaries (split-role
# runs, the tutorial's steps, baseline ab), most of them one after the other: a
# --requests 10 run of a suite binary takes 2.6 s instead of 3.6. A race found while a
# process runs is reported as before (and fails its test: exit 66); GORACE set by the caller
# is kept.
TEST_GORACE := GORACE="$${GORACE-atexit_sleep_ms=0}"

# TEST_TMPDIR: where the tests' servers (and every temporary file of a test) live. A tmpfs
# (/dev/shm) where the machine has one that can run programs: a virtual machine's disk makes
# PostgreSQL's file operations (initdb, WAL, data files) cost more CPU than the tests' own
# work, and the tests are CPU-bound on two cores (docs/testing.md, "How long it takes"). The
# servers stay real and durable where a test asks for it: a crash of PostgreSQL (not of the
# machine) loses nothing a tmpfs holds. Go's own temporary files (the test binaries) stay
# where go puts them (GOTMPDIR). The binaries' runs outside the tests are not affected.
TEST_TMPDIR ?= $(shell f=/dev/shm/.hotspotkit-exec-$$$$; cp /bin/true $$f 2>/dev/null && $$f && echo /dev/shm; rm -f $$f)
TEST_ENV := $(if $(TEST_TMPDIR),GOTMPDIR=$${GOTMPDIR:-$${TMPDIR:-/tmp}} TMPDIR=$(TEST_TMPDIR)) $(TEST_GORACE)

# The tests' temporary PostgreSQL servers (about fifty) start from a copy of one initialised
# data directory instead of each running initdb (testkit/servers/pgserver, TemplateDirEnv):
# about a second of CPU saved per server; the temporary MariaDB servers likewise, from one
# mariadb-install-db's (testkit/servers/mariadbserver, TemplateDirEnv): about a second of a
# start and a quarter of a CPU-second each. The directory is made here and removed afterwards.
TEST_TEMPLATES = tpl=$$(mktemp -d -p "$(or $(TEST_TMPDIR),$${TMPDIR:-/tmp})" hotspotkit-pg-templates-XXXXXX) && \
	chmod 755 "$$tpl" && trap 'rm -rf "$$tpl"' EXIT && trap 'exit 130' INT TERM && \
	HOTSPOTKIT_PG_TEMPLATE_DIR=$$tpl HOTSPOTKIT_MARIADB_TEMPLATE_DIR=$$tpl

# Dead code fails the build: a function that no main and no test can reach (deadcode of
# golang.org/x/tools, a tool of go.mod, built into bin/ from the build cache). With
# -test, a function only tests call counts as reached: queue and queue/redisq are libraries
# for services, their API exercised by their tests. It type-checks the module and its
# dependencies from source: about 20 CPU-seconds (11-15 s on two cores) on a warm cache; on
# an empty one, building the tool adds about 90 CPU-seconds. The tool is built plain, but the
# go list it runs gets the flags of make test's vet (DEADCODE_FLAGS): the cgo it runs
# to list the packages (pg_query_go's above all) is then the vet's, from the build cache,
# instead of a second cgo pass for a plain build (up to 70 CPU-seconds on an empty cache).
DEADCODE_FLAGS ?= -race -trimpath
DEADCODE = $(GO) build -o $(BIN)/deadcode golang.org/x/tools/cmd/deadcode && \
	  dead=$$(GOFLAGS="$(DEADCODE_FLAGS)" $(BIN)/deadcode -test ./...) && if [ -n "$$dead" ]; then \
	  echo "unreachable functions (delete them; API that a service needs wants a test):"; echo "$$dead"; exit 1; fi

deadcode:
	@$(DEADCODE)

# TEST_FLAGS: more flags for go test, e.g. TEST_FLAGS=-json to list what skipped and why
# (docs/testing.md).
TEST_FLAGS ?=

test: setup-test
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet -race -trimpath ./...
	@$(DEADCODE)
	$(TEST_TEMPLATES) $(TEST_ENV) $(GO) test -p $(TEST_P) -vet=off -race -trimpath -ldflags=-w -timeout 25m $(TEST_FLAGS) $$($(GO) list $(SLOW_TESTS); $(GO) list ./... | grep -vxF "$$($(GO) list $(SLOW_TESTS))")

# Micro-benchmarks (queue enqueue/merge/flush, load engine); recorded, never asserted.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./queue/ ./testkit/internal/runner/load/ ./testkit/counters/

# pgbench running the usage-counter sync transaction beside the suite's sync mode, both at
# 64 connections for 30 s on their own temporary servers.
pgbench: build
	$(BIN)/usage_counter_pgbench --max-connections 64 --duration 30s
	$(BIN)/usage_counter_hotspot_baseline --modes sync --requests 0 --duration 30s \
	  --concurrency 64 --max-connections 64 --output /tmp/hotspotkit-sync-64.json

# Every suite at 60000 requests × 6000 concurrency, default modes, three repetitions each,
# filed under records/baselines/<machine class>/, then the table and the plots regenerated.
baseline: build
	mkdir -p $(BASELINE_TMP)
	set -e; for s in $(SUITES); do \
	  echo "== $$s $(BASELINE_ARGS)"; \
	  $(BIN)/$$s $(BASELINE_ARGS) --output $(BASELINE_TMP)/$$s.json; \
	done
	$(BIN)/baseline store --dir records/baselines $(BASELINE_TMP)/*.json
	rm -rf $(BASELINE_TMP)
	$(MAKE) baseline-report

# Regenerates records/BASELINES.md and records/baselines.html from the committed baselines.
baseline-report: build
	{ echo "# Baselines"; echo; \
	  echo "Generated by \`make baseline\` from \`records/baselines/*/*.json\` (medians, min–max in"; \
	  echo "parentheses, over the repetitions). Environment of each run: see its JSON."; echo; \
	  $(BIN)/baseline table records/baselines/*/*.json; } > records/BASELINES.md
	$(BIN)/baseline plot records/baselines/*/*.json --output records/baselines.html

# The fault matrix of the README at 60000 × 6000: each fault in the usage-counter suite's sync
# and async-compact modes, then restart-postgres in every suite's sync and outbox modes with
# one try and with --max-tries 20; reports under records/runs/faults/, one table on stdout
# (its "max tries" column tells the two apart).
FAULT_ARGS ?= --requests 60000 --concurrency 6000
RETRY_SUITES := usage_counter_hotspot_baseline:sync,outbox usage_settlement_hotspot_baseline:sync,outbox \
	usage_aux_counter_hotspot_baseline:sync,outbox request_candidate_persistence_baseline:sync
faults: build
	mkdir -p records/runs/faults
	set -e; run() { name=$$1; bin=$$2; shift 2; echo "== $$name"; \
	  $(BIN)/$$bin $(FAULT_ARGS) "$$@" --output records/runs/faults/$$name.json; }; \
	uc=usage_counter_hotspot_baseline; \
	run sync-terminate-backends   $$uc --modes sync --fault terminate-backends@5s; \
	run sync-restart-postgres     $$uc --modes sync --fault restart-postgres@5s; \
	run sync-lock-timeout         $$uc --modes sync --fault lock-timeout=200; \
	run sync-statement-timeout    $$uc --modes sync --fault statement-timeout=500; \
	run async-compact-terminate-backends $$uc --modes async-compact --fault terminate-backends@150ms; \
	run async-compact-restart-postgres   $$uc --modes async-compact --fault restart-postgres@150ms; \
	run async-compact-pause-flush        $$uc --modes async-compact --fault pause-flush@20ms+2s; \
	run async-compact-pause-flush-full   $$uc --modes async-compact --fault pause-flush@20ms+2s --queue-capacity 10000; \
	run async-compact-pause-flush-drop   $$uc --modes async-compact --fault pause-flush@20ms+2s --queue-capacity 10000 --queue-full drop; \
	run outbox-terminate-backends $$uc --modes outbox --fault terminate-backends@3s; \
	for s in $(RETRY_SUITES); do bin=$${s%%:*}; modes=$${s##*:}; \
	  run $${bin%_baseline}-restart-postgres-1-try $$bin --modes $$modes --fault restart-postgres@5s --max-tries 1; \
	  run $${bin%_baseline}-restart-postgres-20-tries $$bin --modes $$modes --fault restart-postgres@5s \
	    --max-tries 20 --retry-backoff-ms 50; \
	done
	$(MAKE) fault-matrix
	$(BIN)/baseline table records/runs/faults/*.json

# Every suite under every fault, in sync and async-compact (FAULT_MATRIX_ARGS each): the
# PostgreSQL faults on the memory queue, kill-flusher in async-compact, the Redis ones on
# --queue-backend redis --redis managed (crash-redis with each --redis-persist: `off` is
# expected to lose what the stream held, and exits 1, which the matrix records, not stops on).
# Reports under records/runs/faults/matrix/.
FAULT_MATRIX_ARGS ?= --requests 0 --duration 10s --concurrency 200
FAULT_MATRIX_PG := terminate-backends@3s restart-postgres@3s crash-postgres@3s lock-timeout=200 statement-timeout=500
fault-matrix: build
	mkdir -p records/runs/faults/matrix
	run() { name=$$1; bin=$$2; shift 2; echo "== $$name"; 	  $(BIN)/$$bin $(FAULT_MATRIX_ARGS) "$$@" --output records/runs/faults/matrix/$$name.json || echo "   exit $$?"; }; 	for bin in $(SUITES); do s=$${bin%_baseline}; 	  for f in $(FAULT_MATRIX_PG); do 	    for m in sync async-compact; do run $$s-$$m-$${f%%[@=]*} $$bin --modes $$m --fault $$f; done; 	  done; 	  run $$s-async-compact-pause-flush   $$bin --modes async-compact --fault pause-flush@3s+2s; 	  run $$s-async-compact-kill-flusher  $$bin --modes async-compact --fault kill-flusher@3s; 	  run $$s-redis-kill-consumer         $$bin --modes async-compact --queue-backend redis --redis managed --fault kill-consumer@3s; 	  for p in always everysec off; do 	    run $$s-redis-crash-redis-$$p $$bin --modes async-compact --queue-backend redis --redis managed 	      --redis-persist $$p --fault crash-redis@3s+1s; 	  done; 	done
	$(BIN)/baseline table records/runs/faults/matrix/*.json

# A 10-minute soak of the counter suite in async-compact, open loop at 2,000 requests/s, a fault
# every 30 s in turn (every timed fault the mode allows); the report (drift after the first
# minute, each fault's recovery time) goes to records/runs/soak/. SOAK_ARGS to change it.
SOAK_ARGS ?= --rate 2000 --concurrency 200 --max-connections 32
soak: build
	mkdir -p records/runs/soak
	$(BIN)/usage_counter_hotspot_baseline --modes async-compact --requests 0 --duration 10m \
	  --fault-every 30s $(SOAK_ARGS) --output records/runs/soak/usage-counter-async-compact-10m.json

clean:
	rm -rf $(BIN)
