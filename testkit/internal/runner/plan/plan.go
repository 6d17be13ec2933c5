package plan

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/plotpage"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
)

// Plan is a validated invocation: the flags every suite shares, parsed and checked against
// each other and the suite once (Parse), and read-only from then on. It holds no flag set:
// what the report records of the flags (RunConfig) is taken when it is made. What an invocation
// opens at run time (the database target, Redis) belongs to the engine, never to the Plan
// (TestPlanIsReadOnly).
type Plan struct {
	// Settings are the flags results.RunConfig declares, bound to the RunConfig the report
	// records (settings.go): c.QueueWorkers is --queue-workers.
	Settings

	// Modes is --modes, parsed.
	Modes  []testkit.Mode
	Output string

	// HotKeyDist is --hot-key-dist parsed over --hot-keys (hotkeys.go); HotSets says the
	// suite's requests pick a hot set by it (Info.HotSets): without, the flag is refused.
	HotKeyDist testkit.HotKeyDist
	HotSets    bool

	// Views of settings, typed as the engine reads them, under the names it knows (views,
	// settings.go): each is its setting converted, and nothing else sets it.
	Duration, Warmup time.Duration
	DrainTimeout     time.Duration
	// The bounds of a run's waits (docs/faults-and-soak.md, "What ends a hung run").
	RequestTimeout, ReconcileTimeout, ShutdownTimeout time.Duration
	// FaultEvery is --fault-every: a soak's rotating faults (0: none).
	FaultEvery time.Duration
	QueueFull  queue.FullPolicy
	PgDownload pgserver.DownloadConfig

	// OpenLoop: --rate, --rates and friends typed (openloop.go).
	OpenLoop
	// Network: --db-rtt, --redis-rtt, --rtt-levels typed (network.go).
	Network
	// Pooler: --pooler, --pooler-url, --pooler-rtt typed (pooler.go).
	PoolerLink
	// Advice is --advise and its flags (advise.go).
	Advice Advice
	// ConnPool: --conn-max-lifetime and --conn-max-idle typed (pool.go).
	ConnPool

	// Slotted says the suite has slots (Info.Slots, slots.go): without, --slots, --slot-pick
	// and --slots-levels are refused and every run has 0 slots.
	Slotted bool

	CPUProfile  string
	MemProfile  string
	MetricsAddr string
	// MetricsLinger keeps --metrics-addr serving the final values this long after the report
	// is written (0: close at once), so a scraper on its interval gets them.
	MetricsLinger time.Duration
	// Calibrate measures the machine before the first run (testkit/internal/measure/calibrate).
	Calibrate bool

	// Wide prints the full table on stderr instead of the short summary (--wide).
	Wide bool
	// ProgressInterval is how often a progress line is written when stderr is not a
	// terminal (0: never; a terminal gets its redrawn line whatever it is).
	ProgressInterval time.Duration
	// HTML is the page of the report to draw once it is written (--html), and HTMLTool the
	// baseline tool that draws it (package plotpage), found before anything starts.
	HTML     string
	HTMLTool string

	// Faults are --fault's, parsed.
	Faults []faults.Fault
	Role   redisq.Role // --role, parsed

	// BreakExpectations is the hidden --debug-break-expectations.
	BreakExpectations bool
	// RequestsGiven says --requests was on the command line: a ladder rung, or a run at a
	// rate, then stops at it too.
	RequestsGiven bool

	// recorded and suiteFlags are what the report records of every run (RunConfig, record.go).
	recorded   results.RunConfig
	suiteFlags map[string]any
	// retryClassesRaw is --retry-classes as given: a kind's plan (ByKind) takes its defaults
	// from it.
	retryClassesRaw []string
	// kind is the kind of a kind's plan of a ladder over the kinds (ByKind): its rungs are
	// that kind's; "" in any other plan.
	kind string
}

// The defaults of the bounds of a run's waits. A request at the default flags (100 workers on
// 64 connections) takes milliseconds, and the slowest request of the 6,000-worker baselines
// about 10 s: the request timeout is far above both. A path that comes back within the
// reconcile timeout after the requests gave up on it is verified as usual.
const (
	DefaultRequestTimeout   = 30 * time.Second
	DefaultReconcileTimeout = time.Minute
	DefaultShutdownTimeout  = 5 * time.Second
)

// DefaultProgressInterval is --progress-interval's default: a CI log or a `| tee` shows the
// run advancing without drowning in lines.
const DefaultProgressInterval = 5 * time.Second

// parser is a Plan being made: the flag set and the raw values of the flags parsed into
// something else.
type parser struct {
	*Plan
	info testkit.Info
	fs   *pflag.FlagSet

	modesRaw, faultsRaw []string
	// ladderRaw holds each axis's ladder flag as given, by axis name (ladder.go).
	ladderRaw map[string]*string
	// engineDefaults are the shared flags' defaults before the suite's Info.Defaults.
	engineDefaults map[string]string
	// registered counts the settings of RunConfig registerSettings went through.
	registered int
}

// register registers the flags every suite shares: RunConfig's settings (registerSettings,
// settings.go) and, between them where --help lists them, the flags declared here.
func (c *parser) register() {
	fs, info := c.fs, c.info
	c.registerSettings("max-connections") // --requests through --max-connections
	fs.StringSliceVar(&c.modesRaw, "modes", testkit.ModeNames(info.DefaultModes), "comma-separated write modes to run, each on freshly reset state: "+strings.Join(testkit.ModeNames(info.Modes), ", "))
	c.registerSettings("seed") // --flush-batch-size through --seed
	c.hideHotKeyDist()         // hotkeys.go
	fs.StringVarP(&c.Output, "output", "o", "", "write the JSON report here (and samples to FILE.samples.ndjson); default: JSON on stdout")
	fs.BoolVar(&c.Wide, "wide", false, "print the full table of `baseline table` on stderr instead of the short summary")
	fs.DurationVar(&c.ProgressInterval, "progress-interval", DefaultProgressInterval, "when stderr is not a terminal, a progress line this often (as pgbench -P); 0: none (a terminal always gets its live line)")
	fs.StringVar(&c.HTML, "html", "", "with --output: also write the report's `baseline plot` page here (runs the baseline tool found beside this binary or on PATH)")
	c.registerSettings("shutdown-timeout") // --postgres-url through --shutdown-timeout
	c.registerSettings("retry-backoff-ms") // --max-tries, --retry-backoff-ms
	fs.StringSliceVar(&c.retryClassesRaw, "retry-classes", nil, "error classes a request is retried for (SQLSTATEs, conn_closed, conn_error, deadline_exceeded, request_timeout); default "+strings.Join(load.DefaultRetryClasses, ",")+", and 57014 with --fault statement-timeout")
	c.registerSettings("slot-pick")        // --repeat through --slot-pick
	c.hideSlots()                          // slots.go
	c.registerAdvise()                     // advise.go
	c.registerSettings("redis-rtt-jitter") // --db-rtt through --redis-rtt-jitter

	fs.StringArrayVar(&c.faultsRaw, "fault", nil, "inject a fault (repeatable): terminate-backends@T, restart-postgres@T, crash-postgres@T, pause-flush@T+D, kill-flusher@T, kill-consumer@T, crash-redis@T[+D], redis-failover@T, redis-reshard@T (--redis cluster), conn-storm@T[=N] (N sessions, default 64, opened at once as the load's pool opens them, each running SELECT 1, then closed at once), kill-worker@T (a suite's own workers, where it has them), statement-timeout=MS, lock-timeout=MS; on the network to pg or redis: net-delay:TARGET@T+D[=EXTRA], net-blackhole:TARGET@T[+D] (no +D: until the run ends), net-reset:TARGET@T")
	c.registerSettings("fault-every")
	fs.BoolVar(&c.Calibrate, "calibrate", true, "measure this machine's PostgreSQL first (not on MySQL, whose reports say they were not calibrated; a few seconds: hot-row UPDATE rate, batched-write ceiling) so throughput compares across machines as efficiency; --calibrate=false skips it")
	fs.StringVar(&c.CPUProfile, "cpu-profile", "", "write a Go CPU profile of the whole invocation here (go tool pprof)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "serve Prometheus/OpenMetrics metrics of every run at http://HOST:PORT/metrics for the whole invocation (port 0: a free one, printed)")
	fs.DurationVar(&c.MetricsLinger, "metrics-linger", 0, "with --metrics-addr: keep serving the final values this long after the report is written (e.g. 15s, a scrape interval; Ctrl-C ends it early)")
	fs.StringVar(&c.MemProfile, "mem-profile", "", "write a Go heap profile here, taken when the live heap peaked (go tool pprof -sample_index=inuse_space)")

	fs.BoolVar(&c.BreakExpectations, "debug-break-expectations", false, "make every verification expectation off by one (tests the exit code)")
	_ = fs.MarkHidden("debug-break-expectations")
	c.registerSettings("") // the rest: --debug-lose-commit-every, --debug-slow-flush-pct and any declared after
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// validate checks the common flags; it runs before anything starts.
func (c *parser) validate() error {
	info := c.info
	var errs []string
	bad := func(format string, a ...any) { // once each: a ladder over the kinds checks some flags per kind
		if msg := fmt.Sprintf(format, a...); !slices.Contains(errs, msg) {
			errs = append(errs, msg)
		}
	}
	c.checkSettings(bad) // settings.go: the bounds their tags give
	c.views()
	if c.Requests < 0 || (c.Requests == 0 && c.Duration == 0) {
		bad("--requests must be positive (or 0 with --duration)")
	}
	if c.Duration < 0 || c.Warmup < 0 {
		bad("--duration and --warmup must not be negative")
	}
	if c.Duration > 0 && c.Warmup >= c.Duration {
		bad("--warmup must be shorter than --duration")
	}
	if c.QueueCapacity < c.QueueWorkers {
		bad("--queue-capacity must be at least --queue-workers")
	}
	if c.DrainTimeout <= 0 {
		bad("--drain-timeout must be positive")
	}
	if c.RequestTimeout <= 0 {
		bad("--request-timeout must be positive, got %s", c.RequestTimeout)
	}
	if c.ReconcileTimeout < 0 {
		bad("--reconcile-timeout must not be negative, got %s", c.ReconcileTimeout)
	}
	if c.ShutdownTimeout <= 0 {
		bad("--shutdown-timeout must be positive, got %s", c.ShutdownTimeout)
	}
	if c.DebugSlowFlushPct > 0 && c.QueueBackend == testkit.BackendRedis {
		bad("--debug-slow-flush-pct needs --queue-backend memory")
	}
	c.Modes = nil
	for _, m := range c.modesRaw {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		i := slices.IndexFunc(info.Modes, func(mode testkit.Mode) bool { return mode.String() == m })
		if i < 0 {
			bad("unknown mode %q for %s (modes: %s)", m, info.Name, strings.Join(testkit.ModeNames(info.Modes), ", "))
			continue
		}
		if !slices.Contains(c.Modes, info.Modes[i]) {
			c.Modes = append(c.Modes, info.Modes[i])
		}
	}
	if len(c.Modes) == 0 && len(errs) == 0 {
		bad("--modes is empty")
	}
	c.validateLadders(bad)    // ladder.go
	c.validateOpenLoop(bad)   // openloop.go
	c.validateAdvise(bad)     // advise.go
	c.validateSlots(bad)      // slots.go
	c.validateHotKeyDist(bad) // hotkeys.go
	c.Faults = nil
	for _, raw := range c.faultsRaw {
		f, err := faults.Parse(raw)
		if err != nil {
			bad("%v", err)
			continue
		}
		if !faults.Takes(info.Faults, f.Kind) {
			takes := "every kind but " + strings.Join(faults.Declared, ", ")
			if info.Faults != nil {
				takes = strings.Join(info.Faults, ", ")
			}
			bad("--fault %s: %s cannot take %s (it takes: %s)", raw, info.Name, f.Kind, takes)
			continue
		}
		if needs := c.faultNeeds(f.Kind); needs != "" {
			bad("--fault %s %s", raw, needs)
		} else if len(c.Modes) > 0 && !slices.ContainsFunc(c.Modes, func(m testkit.Mode) bool { return faultFitsMode(f.Kind, m) }) {
			bad("--fault %s needs %s in --modes", raw, modesFor(f.Kind, info.Modes))
		}
		c.Faults = append(c.Faults, f)
	}
	if c.ProgressInterval < 0 {
		bad("--progress-interval must not be negative (0: no progress lines)")
	}
	if c.HTML != "" {
		if c.Output == "" {
			bad("--html needs --output (the page is drawn from the report file and its samples)")
		} else if tool, err := plotpage.Locate(); err != nil {
			bad("%v", err)
		} else {
			c.HTMLTool = tool
		}
	}
	switch {
	case c.MetricsLinger < 0:
		bad("--metrics-linger must not be negative")
	case c.MetricsLinger > 0 && c.MetricsAddr == "":
		bad("--metrics-linger needs --metrics-addr (there is no endpoint to keep open)")
	}
	switch {
	case c.fs.Changed("fault-every") && c.FaultEvery <= 0:
		bad("--fault-every must be positive (e.g. 30s)")
	case c.FaultEvery > 0 && c.Duration == 0:
		bad("--fault-every needs --duration (the length of the soak its faults rotate through)")
	}
	c.RetryClasses = retryClasses(c.retryClassesRaw, c.Faults, c.Dialect(), bad)
	c.validateConnPool(bad) // connpool.go
	if c.Schema != "" {
		if err := database.ValidateSchemaName(c.Schema); err != nil {
			bad("--schema: %v", err)
		}
	}
	c.validateKinds(bad) // database.go
	c.Role = c.Streams().Validate(c.fs, redisrun.Common{Modes: len(c.Modes), AsyncModes: countFunc(c.Modes, testkit.Mode.Async),
		DatabaseURL: c.DatabaseURL(), Schema: c.Schema, Repeat: c.Repeat, Requests: c.Requests}, bad)
	c.validateNetwork(bad) // network.go
	c.validatePooler(bad)  // pooler.go
	c.validatePool(bad)    // pool.go
	if backends := queueBackends(info); c.QueueBackend != "" && !slices.Contains(backends, c.QueueBackend) {
		bad("--queue-backend %s: %s runs on %s only", c.QueueBackend, info.Name, strings.Join(backends, ", "))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// queueBackends is what Info.QueueBackends means: nil is the memory queue only.
func queueBackends(info testkit.Info) []string {
	if info.QueueBackends == nil {
		return []string{testkit.BackendMemory}
	}
	return info.QueueBackends
}

// Streams is the settings of the durable queue backend and of split runs, as package
// redisrun reads them.
func (c *Plan) Streams() redisrun.StreamConfig {
	return redisrun.StreamConfig{RunConfig: &c.Settings.RunConfig}
}

// Joining reports whether this process joins a run another process set up (its tables and
// seed rows, its stream): a producer or consumer that did not create the schema.
func (c *Plan) Joining(t database.Target) bool {
	return c.Role != redisq.RoleBoth && !t.Created()
}

// KeepsSchema is --keep-schema, and always for a run split over processes: the schema
// outlives every process of the run, and whoever verifies it drops it.
func (c *Plan) KeepsSchema() bool { return c.KeepSchema || c.Role != redisq.RoleBoth }

func countFunc[T any](list []T, f func(T) bool) int {
	n := 0
	for _, v := range list {
		if f(v) {
			n++
		}
	}
	return n
}

// RetryPolicy is the load engine's policy for Request.Try.
func (c *Plan) RetryPolicy() *load.Retry {
	return &load.Retry{MaxTries: c.MaxTries, Backoff: time.Duration(c.RetryBackoffMs) * time.Millisecond,
		Seed: c.Seed, Classes: c.RetryClasses}
}

// retryClasses is --retry-classes, validated, or the default set: load.DefaultRetryClasses,
// and the statement's timeout when --fault statement-timeout sets one on purpose (57014 on
// PostgreSQL, MariaDB's 1969), and on MySQL InnoDB's lock wait timeout (1205) when --fault
// lock-timeout sets one (PostgreSQL's 55P03 is in the default set already).
func retryClasses(raw []string, fs []faults.Fault, d sqldb.Dialect, bad func(string, ...any)) []string {
	if len(raw) == 0 {
		classes := slices.Clone(load.DefaultRetryClasses)
		set := func(kind string) bool {
			return slices.ContainsFunc(fs, func(f faults.Fault) bool { return f.Kind == kind })
		}
		switch {
		case set(faults.StatementTimeout) && d == sqldb.MySQL:
			classes = append(classes, sqldb.ClassMariaDBStatementTimeout)
		case set(faults.StatementTimeout):
			classes = append(classes, "57014")
		}
		if set(faults.LockTimeout) && d == sqldb.MySQL {
			classes = append(classes, sqldb.ClassMySQLLockWaitTimeout)
		}
		return classes
	}
	var classes []string
	for _, class := range raw {
		class = strings.TrimSpace(class)
		if err := load.ValidateRetryClass(class); err != nil {
			bad("--retry-classes: %v", err)
			return nil
		}
		if !slices.Contains(classes, class) {
			classes = append(classes, class)
		}
	}
	return classes
}

// faultNeeds says what the flags lack for a fault of kind to strike ("" when nothing).
func (c *Plan) faultNeeds(kind string) string {
	switch {
	case (kind == faults.RestartPostgres || kind == faults.CrashPostgres) && c.DatabaseURL() != "":
		return "needs the temporary server (it cannot restart a server given by URL)"
	case c.refusedOnMySQL(kind) != "":
		return c.refusedOnMySQL(kind)
	case kind == faults.KillConsumer && c.QueueBackend != testkit.BackendRedis:
		return "needs --queue-backend redis (the memory queue has no consumer process)"
	case kind == faults.CrashRedis && (c.QueueBackend != testkit.BackendRedis || !c.Streams().ManagedRedis()):
		return "needs --queue-backend redis --redis managed (a redis-server this run starts, kills and starts again)"
	case kind == faults.RedisFailover && (c.QueueBackend != testkit.BackendRedis || !c.Streams().ManagedCluster() || c.RedisReplicas < 1):
		return "needs --queue-backend redis --redis cluster --redis-replicas 1 (a master of a cluster this run starts is killed, and its replica takes over)"
	case kind == faults.RedisReshard && (c.QueueBackend != testkit.BackendRedis || !c.Streams().ManagedCluster()):
		return "needs --queue-backend redis --redis cluster (slots of a cluster this run starts are moved)"
	case kind == faults.KillFlusher && c.QueueBackend != testkit.BackendMemory:
		return "needs --queue-backend memory (the queue's own flush workers)"
	case kind == faults.PoolerRestart && (c.Settings.Pooler != "pgbouncer" || c.PoolerURL != ""):
		return "needs --pooler pgbouncer (a PgBouncer this run starts, kills and starts again)"
	case kind == faults.PoolerPause && !c.Pooled():
		return "needs --pooler pgbouncer or --pooler-url (a PgBouncer whose console pauses the run's database)"
	}
	return ""
}

// faultFitsMode reports whether a fault of kind can strike a run of mode, as the mode says:
// pausing the flush needs flushers, the queue's faults an async mode.
func faultFitsMode(kind string, mode testkit.Mode) bool {
	switch kind {
	case faults.PauseFlush:
		return mode.Flushes()
	case faults.KillFlusher, faults.KillConsumer, faults.CrashRedis, faults.RedisFailover, faults.RedisReshard:
		return mode.Async()
	}
	return true
}

// modesFor names, for an error, the modes of the suite's that a fault of kind can strike.
func modesFor(kind string, modes []testkit.Mode) string {
	what := "an async mode"
	if kind == faults.PauseFlush {
		what = "a mode with flushers"
	}
	fit := testkit.ModeNames(slices.DeleteFunc(slices.Clone(modes), func(m testkit.Mode) bool { return !faultFitsMode(kind, m) }))
	if len(fit) == 0 {
		return what + ", which the suite has none of,"
	}
	return what + " (" + strings.Join(fit, ", ") + ")"
}

// Rotation is the --fault-every schedule of a run in mode: every timed fault the suite
// declares and the flags and the mode allow, in turn, until --duration.
func (c *Plan) Rotation(info testkit.Info, mode testkit.Mode) []faults.Fault {
	if c.FaultEvery <= 0 {
		return nil
	}
	var kinds []string
	for _, k := range faults.Timed {
		if faults.Takes(info.Faults, k) && c.faultNeeds(k) == "" && faultFitsMode(k, mode) {
			kinds = append(kinds, k)
		}
	}
	return faults.Rotation(kinds, c.FaultEvery, c.Duration)
}

func flagValue(f *pflag.Flag) any {
	s := f.Value.String()
	switch f.Value.Type() {
	case "int", "int64", "int32":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case "float64":
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v
		}
	case "bool":
		return s == "true"
	case "duration":
		if d, err := time.ParseDuration(s); err == nil {
			return d.String()
		}
	case "stringSlice":
		v, _ := f.Value.(pflag.SliceValue)
		if v != nil {
			return v.GetSlice()
		}
	}
	return s
}

// Config is what a suite reads of the plan (Run.Config, Validator).
func (c *Plan) Config() testkit.Config {
	return testkit.Config{Requests: c.Requests, Duration: c.Duration, Concurrency: c.Concurrency, HotKeys: c.HotKeys,
		HotKeyDist: c.HotKeyDist, Seed: c.Seed, FlushBatchSize: c.FlushBatchSize, FlushInterval: c.FlushInterval(),
		RequestTimeout: c.RequestTimeout, SlotPick: c.SlotPick, Slots: int(c.Most(results.AxisSlots).Num),
		Modes: slices.Clone(c.Modes), SplitRun: c.Role != redisq.RoleBoth, PoolerMode: c.poolerMode(), Dialect: c.Dialect(),
		MaxTries: max(c.MaxTries, 1), Faulted: len(c.Faults) > 0 || c.FaultEvery > 0 || c.DebugLoseCommitEvery > 0}
}

// FlushInterval is --flush-interval-ms.
func (c *Plan) FlushInterval() time.Duration {
	return time.Duration(c.FlushIntervalMs) * time.Millisecond
}
