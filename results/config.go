package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RunConfig is what a run was configured with: every flag of the engine that a report records,
// under its snake_case name, durations in milliseconds (key ending in _ms), and the suite's own
// flags in Suite. It is the one place that says which settings shape the work: each field's
// `shapes` tag. Two runs measured the same thing only when every setting that shapes the work
// is equal (baseline compare pairs them so); the others (where the report went, which server,
// the seed of a random draw, the ladder a run stood on, ...) never keep two runs apart.
//
// It is also where a setting's flag is declared: a field with a `usage` tag is a flag of every
// suite, which package testkit/internal/runner/plan registers, bound to the field, in field order (so
// the fields stand in --help's order). Its name is the field's key with dashes, or its `flag`
// tag; its other tags say the rest: `default` (as the command line gives it; none: the zero
// value), `min` and `max` (a number's bounds, inclusive), `enum` (the values a string may take,
// separated by |), `unit:"ms"` (a float64 of milliseconds that the command line gives as a Go
// duration, 30s or 250ms) and `hidden:"true"` (a test hook, left out of --help). What a flag
// needs checked against the others stays code in plan. A field without a usage tag is recorded
// from a flag declared in code (a list parsed into something else, or another package's flag).
//
// A setting that has no effect under the others is left out (Canonical): the retry settings
// when max_tries is 1, the open-loop ones in a closed loop, slots and slot_pick with one slot,
// the hot key distribution when it is uniform or over one key, and every setting that is off.
// A zero value read back therefore means the setting's off value (0, "", false), which is what
// an engine without that setting ran as: a setting added after the first reports is omitempty,
// and its zero value is how runs went before it.
//
// A run split over processes (--role) is one run only when its processes agree on what shapes
// the work, with the exceptions each field's `split` tag names: "producer", a setting of the
// producers' load, which the consumers (who run none) may leave at anything; "consumer", a
// setting of the consumers' flushing, which the producers may; "process", each process's own
// part in the run (its role, producer id, a producer's share of the requests and workers, the
// faults injected into it). baseline merge checks the processes' reports so, and takes the
// consumers' settings from a consumer (TakeSplit).
//
// The engine builds one per run with NewRunConfig; Read converts the flag-named map of a
// version 1 report into one.
type RunConfig struct {
	// Requests is the total requests of the run, warm-up included (0: bound by DurationMs).
	Requests int64 `json:"requests" default:"2000" usage:"total requests per run (warm-up included)" shapes:"yes" split:"process"`
	// Concurrency is the closed loop's workers, or the ladder level; an open loop's cap on the
	// requests in flight.
	Concurrency int `json:"concurrency" default:"100" min:"1" usage:"concurrent workers (closed loop); thousands are fine, they share the pool" shapes:"yes" split:"process"`
	// DurationMs stops starting requests after this long (0: bound by Requests only).
	DurationMs float64 `json:"duration_ms" flag:"duration" unit:"ms" usage:"stop starting requests after this long (e.g. 30s); with --requests, whichever comes first" shapes:"yes" split:"producer"`
	// WarmupMs is the first stretch, whose requests run but are left out of the statistics.
	WarmupMs float64 `json:"warmup_ms" flag:"warmup" unit:"ms" usage:"requests started in this first stretch run but are left out of the statistics" shapes:"yes" split:"producer"`
	// MaxConnections is the size of the load's connection pool.
	MaxConnections int `json:"max_connections" default:"64" min:"1" usage:"size of the load's connection pool" shapes:"yes"`
	// MinConnections is the pool's minimum (pgxpool's MinConns): connections it keeps open,
	// idle or not, opening them again when they close; absent: 0.
	MinConnections int `json:"min_connections,omitempty" min:"0" usage:"the load's pool keeps at least this many connections open (pgxpool's MinConns, a service's MIN_CONNECTIONS); at most --max-connections" shapes:"yes"`
	// ConnMaxLifetimeMs closes a pool connection this long after it opened (pgxpool's
	// MaxConnLifetime, with up to 10% more at random: database.LifetimeJitter), ConnMaxIdleMs one idle this
	// long (MaxConnIdleTime); absent: never. They churn the pool's sessions, as deploys do.
	ConnMaxLifetimeMs float64 `json:"conn_max_lifetime_ms,omitempty" flag:"conn-max-lifetime" unit:"ms" usage:"the load's pool closes a connection this long after it opened (pgxpool's MaxConnLifetime, each connection's lifetime longer by up to 10% at random), e.g. 30s; 0: never" shapes:"yes"`
	ConnMaxIdleMs     float64 `json:"conn_max_idle_ms,omitempty" flag:"conn-max-idle" unit:"ms" usage:"the load's pool closes a connection idle this long (pgxpool's MaxConnIdleTime; not below --min-connections), e.g. 5s; 0: never" shapes:"yes"`
	// Modes are the modes the invocation ran; each run records its own in Run.Mode.
	Modes []string `json:"modes" shapes:"no"`

	// FlushBatchSize is the records per flush (outbox claim size, queue batch size).
	FlushBatchSize int `json:"flush_batch_size" default:"1000" min:"1" usage:"records per flush (outbox claim size, queue batch size)" shapes:"yes" split:"consumer"`
	// FlushIntervalMs is the longest a partial batch waits before it is flushed.
	FlushIntervalMs int `json:"flush_interval_ms" default:"100" min:"1" usage:"longest a partial batch waits before it is flushed, in ms" shapes:"yes" split:"consumer"`
	// MonitorIntervalMs is the lock and pool sampling interval (the sampling queries load the
	// server too).
	MonitorIntervalMs int `json:"monitor_interval_ms" default:"100" min:"1" usage:"lock and pool sampling interval, in ms" shapes:"yes"`
	// HotKeys is the number of hot rows per hot table.
	HotKeys int `json:"hot_keys" default:"1" min:"1" usage:"number of hot rows per hot table (1: every request hits the same rows)" shapes:"yes"`
	// HotKeyDist is how the requests spread over the hot keys (--hot-key-dist): zipf:θ or
	// exponential:λ; absent: uniform (request i writes key i mod hot_keys), as with one hot
	// key, and in a suite without hot key sets.
	HotKeyDist string `json:"hot_key_dist,omitempty" default:"uniform" usage:"counter suites: how requests spread over the --hot-keys sets of hot rows: uniform (request i writes set i mod --hot-keys), zipf:θ (rank r with probability ∝ 1/(r+1)^θ; YCSB's θ is 0.99) or exponential:λ (pgbench's random_exponential; the larger λ, the more on the first sets)" shapes:"yes"`
	// Seed seeds what the suite draws at random: another draw of the same distribution, so it
	// does not shape the work.
	Seed int64 `json:"seed" default:"1" usage:"seed for anything the suite draws at random (reproducible runs)" shapes:"no"`

	// Database is the kind of the run's database: the temporary server's (--database), or
	// what a --mysql-url server says it is, "mariadb" or "mysql"; absent: PostgreSQL. The
	// same work on another kind of database is another measurement.
	Database string `json:"database,omitempty" default:"postgres" enum:"postgres|mariadb" usage:"the kind of the temporary server: postgres, or mariadb (mariadbd and mariadb-install-db from PATH or --mariadb-bin-dir; durable, as PostgreSQL's)" shapes:"yes"`
	// ManagedPostgres is true when the invocation started its own server (of either kind:
	// the name is from when there was one), false on --postgres-url or --mysql-url: a shared
	// server is not the same work.
	ManagedPostgres bool `json:"managed_postgres" flag:"-" shapes:"yes"`
	// PostgresURL is the existing server used, password redacted: which server (its calibration
	// and the environment say what it can do).
	PostgresURL string `json:"postgres_url,omitempty" usage:"use this existing server instead of a temporary one (the run stays inside its own schema)" shapes:"no"`
	// MySQLURL is the existing MySQL or MariaDB server used, password redacted.
	MySQLURL string `json:"mysql_url,omitempty" usage:"use this existing MySQL or MariaDB server instead of a temporary one: mysql://user:password@host:port/ (the run stays inside a database of its own, --schema, dropped afterwards unless --keep-schema; ?socket=PATH for a Unix socket, and go-sql-driver/mysql's parameters: tls, timeout, ...)" shapes:"no"`
	// MariaDBBinDir is where the MariaDB binaries were found (the environment records the version).
	MariaDBBinDir string `json:"mariadb_bin_dir,omitempty" usage:"MariaDB bin directory for the temporary server of --database mariadb (default: $HOTSPOTKIT_MARIADB_BIN_DIR, PATH, /usr/sbin)" shapes:"no"`
	// InnoDBDeadlockDetect, InnoDBLockWaitTimeoutMs and InnoDBFlushLogAtTrxCommit are InnoDB's
	// hot-row settings on a MySQL or MariaDB run: set on the temporary server, read from a
	// --mysql-url one (and recorded as it has them); absent on PostgreSQL.
	InnoDBDeadlockDetect      string  `json:"innodb_deadlock_detect,omitempty" default:"on" enum:"on|off" usage:"MySQL and MariaDB: InnoDB's deadlock detection, on or off (off: a lock wait ends only at --innodb-lock-wait-timeout, error 1205); set on the temporary server, read from a --mysql-url one" shapes:"yes"`
	InnoDBLockWaitTimeoutMs   float64 `json:"innodb_lock_wait_timeout_ms,omitempty" flag:"innodb-lock-wait-timeout" unit:"ms" default:"50s" usage:"MySQL and MariaDB: innodb_lock_wait_timeout, whole seconds (e.g. 50s, InnoDB's default); set on the temporary server, read from a --mysql-url one" shapes:"yes"`
	InnoDBFlushLogAtTrxCommit string  `json:"innodb_flush_log_at_trx_commit,omitempty" default:"1" enum:"1|2|0" usage:"MySQL and MariaDB: innodb_flush_log_at_trx_commit, 1 (the redo log written and flushed at every commit: durable), 2 (written at every commit, flushed once a second) or 0 (both once a second); set on the temporary server, read from a --mysql-url one" shapes:"yes"`
	// PgBinDir is where the PostgreSQL binaries were found (the environment records the version).
	PgBinDir string `json:"pg_bin_dir,omitempty" usage:"PostgreSQL bin directory for the temporary server (default: $HOTSPOTKIT_PG_BIN_DIR, pg_config, PATH, /usr/lib/postgresql/*/bin)" shapes:"no"`
	// PgDownloadCache, PgDownloadURL and PgDownloadVersion say where PostgreSQL binaries would
	// be downloaded from and kept, and which major version, when none is installed.
	PgDownloadCache   string `json:"pg_download_cache,omitempty" usage:"last resort when no local PostgreSQL is found: embedded-postgres downloads binaries into this cache (default ~/.embedded-postgres-go)" shapes:"no"`
	PgDownloadURL     string `json:"pg_download_url,omitempty" usage:"Maven repository embedded-postgres downloads from (default its own, repo1.maven.org)" shapes:"no"`
	PgDownloadVersion int    `json:"pg_download_version,omitempty" default:"16" usage:"PostgreSQL major version to download when no local one is found" shapes:"no"`
	// PgDir is the --pg-dir the temporary server's directory was made in (the environment
	// records its filesystem).
	PgDir string `json:"pg_dir,omitempty" usage:"directory the temporary server's data directory is made in (default $TMPDIR, else /tmp); its filesystem is recorded: on tmpfs an fsync costs nothing" shapes:"no"`
	// PgUser is the OS user that ran the temporary server.
	PgUser string `json:"pg_user,omitempty" usage:"OS user that runs the temporary server when we are root (default: postgres, else nobody)" shapes:"no"`
	// UnsafeNoFsync is the temporary server with fsync, synchronous_commit and full_page_writes
	// off.
	UnsafeNoFsync bool `json:"unsafe_no_fsync" usage:"temporary server with fsync, synchronous_commit and full_page_writes off (fast, not durable; recorded in the report)" shapes:"yes"`
	// Schema is where the tables lived, not what they held.
	Schema string `json:"schema,omitempty" usage:"schema for the run's tables, on MySQL its database (default: hotspot_<random>)" shapes:"no"`
	// KeepSchema left the schema in place afterwards.
	KeepSchema bool `json:"keep_schema" usage:"with --postgres-url or --mysql-url, leave the run's schema (MySQL: database) in place afterwards" shapes:"no"`
	// ReuseSchema accepted an existing schema before the run.
	ReuseSchema bool `json:"reuse_schema" usage:"accept an existing --schema instead of refusing it" shapes:"no"`

	// QueueCapacity is the async queue's capacity in records.
	QueueCapacity int `json:"queue_capacity" default:"65536" min:"1" usage:"async queue capacity (records, all workers together; redis: entries in the stream not yet acknowledged)" shapes:"yes"`
	// QueueWorkers is the number of flush workers.
	QueueWorkers int `json:"queue_workers" default:"2" min:"1" max:"64" usage:"async queue flush workers" shapes:"yes" split:"consumer"`
	// QueueFull is what Enqueue does when the queue is full: drop, sync or block.
	QueueFull string `json:"queue_full" default:"sync" enum:"drop|sync|block" usage:"what Enqueue does when the queue is full: drop, sync (write inline) or block" shapes:"yes"`
	// QueueRetries is the flush retries before records fall back to one-by-one writes.
	QueueRetries int `json:"queue_retries" default:"5" min:"0" usage:"flush retries before records fall back to one-by-one writes" shapes:"yes" split:"consumer"`
	// QueueRetryBackoffMs is the first flush retry's backoff.
	QueueRetryBackoffMs int `json:"queue_retry_backoff_ms" default:"25" min:"0" usage:"first retry backoff in ms (doubles per attempt)" shapes:"yes" split:"consumer"`
	// DrainTimeoutMs is the longest the outbox or queue may take to drain after the load.
	DrainTimeoutMs float64 `json:"drain_timeout_ms" flag:"drain-timeout" unit:"ms" default:"5m" usage:"longest the outbox or queue may take to drain after the load; a drain that persists nothing for --request-timeout plus --reconcile-timeout ends sooner" shapes:"yes" split:"consumer"`
	// RequestTimeoutMs bounds one try of a request (and one flush); ReconcileTimeoutMs is how
	// long verification waits for an unreachable server; ShutdownTimeoutMs how long what is in
	// flight may finish after a signal. They bound waits that a healthy run never reaches.
	RequestTimeoutMs   float64 `json:"request_timeout_ms,omitempty" flag:"request-timeout" unit:"ms" default:"30s" usage:"longest one try of a request may take, waiting for a connection included (and one flush of the queue or outbox); a try cut off is an unknown outcome (class request_timeout), looked up at the end" shapes:"no"`
	ReconcileTimeoutMs float64 `json:"reconcile_timeout_ms,omitempty" flag:"reconcile-timeout" unit:"ms" default:"1m" usage:"after the load, how long verification waits for an unreachable database (or Redis) to answer again before it reports the run unverified; 0: not at all" shapes:"no"`
	ShutdownTimeoutMs  float64 `json:"shutdown_timeout_ms,omitempty" flag:"shutdown-timeout" unit:"ms" default:"5s" usage:"after SIGINT or SIGTERM, how long what is in flight may finish before it is aborted (a second signal aborts at once)" shapes:"no"`

	// QueueBackend is memory or redis.
	QueueBackend string `json:"queue_backend" default:"memory" usage:"async queue backend: memory (in this process) or redis (a Redis stream: durable, shared by processes)" shapes:"yes"`
	// Redis is embedded or managed (for the redis backend).
	Redis string `json:"redis" default:"embedded" usage:"Redis for --queue-backend redis: embedded (miniredis in this process), managed (a temporary redis-server from PATH) or cluster (a temporary Redis Cluster of 3 masters from PATH)" shapes:"yes"`
	// RedisURL is the existing Redis used instead, password redacted: which Redis, not what
	// it did.
	RedisURL string `json:"redis_url,omitempty" usage:"use this existing Redis instead (redis://[:password@]host:port/db), or a Redis Cluster by its seeds (redis://:password@host1:port1,host2:port2 or URLs separated by commas); required with --role" shapes:"no"`
	// RedisPersist is a managed redis-server's append-only file, everysec or always; absent: off.
	RedisPersist string `json:"redis_persist,omitempty" default:"off" usage:"with --redis managed or cluster: the append-only file: off, everysec or always (its appendfsync)" shapes:"yes"`
	// RedisReplicas is a managed cluster's replicas per master (--redis cluster).
	RedisReplicas int `json:"redis_replicas,omitempty" usage:"with --redis cluster: replicas per master (redis-failover needs 1)" shapes:"yes"`
	// StreamShards is the streams a run's queue was spread over; absent: 1.
	StreamShards int `json:"stream_shards,omitempty" default:"1" usage:"redis backend: spread each run's queue over this many streams (a record's key picks its shard; on a cluster each shard in a hash slot of its own)" shapes:"yes"`
	// ReclaimIdleMs is how long an unacknowledged stream entry waits before another consumer
	// takes it over.
	ReclaimIdleMs int `json:"reclaim_idle_ms" default:"10000" usage:"redis backend: entries unacknowledged this long (ms) are taken over by another consumer" shapes:"yes" split:"consumer"`
	// MaxDeliveries is how often an entry is delivered before it is dead-lettered.
	MaxDeliveries int `json:"max_deliveries" default:"5" usage:"redis backend: an entry delivered more often goes to the dead-letter stream" shapes:"yes" split:"consumer"`
	// Role is both, producer or consumer (a run split over processes).
	Role string `json:"role" default:"both" usage:"both, or split a run over processes: producer (runs the load, enqueues) or consumer (writes what producers enqueued)" shapes:"yes" split:"process"`
	// ProducerID is a producer's number in a split run.
	ProducerID int `json:"producer_id" usage:"--role producer: this producer's number; its requests are indexes [id×requests, (id+1)×requests)" shapes:"yes" split:"process"`
	// Verify is a consumer's verification of the whole split run.
	Verify bool `json:"verify" usage:"--role consumer: once the run is over, verify the database against every producer's accepted requests" shapes:"yes" split:"process"`
	// ExpectProducers is the producers a consumer waits for.
	ExpectProducers int `json:"expect_producers" default:"1" usage:"--role consumer: the run is over only once this many producers have registered and finished" shapes:"yes" split:"process"`

	// MaxTries is the tries per request; absent: 1 (no retries), and the retry settings below
	// are left out with it.
	MaxTries int `json:"max_tries,omitempty" default:"1" min:"1" usage:"tries per request (as pgbench's --max-tries): a request that fails with a --retry-classes error is tried again, its latency counted from the first try" shapes:"yes" split:"producer"`
	// RetryBackoffMs is the wait before a first retry (doubling, jittered).
	RetryBackoffMs int `json:"retry_backoff_ms,omitempty" min:"0" usage:"wait before a request's first retry in ms; doubles per retry up to 32×, jittered from --seed" shapes:"yes" split:"producer"`
	// RetryClasses are the error classes a request is retried for.
	RetryClasses []string `json:"retry_classes,omitempty" shapes:"yes" split:"producer"`
	// Repeat is how many times the invocation ran each mode; repetitions of a run pair as one
	// group.
	Repeat int `json:"repeat" default:"1" min:"1" usage:"run each mode this many times on fresh state; the report adds median/min/max" shapes:"no"`
	// Ladder is, for each axis the invocation stepped over (Axis: --levels, --slots-levels,
	// --rtt-levels, --pool-levels, --rates, ...), by the axis's name, the values it stepped
	// over; each run records its own value in the axis's setting (its concurrency, slots,
	// db_rtt_ms, max_connections, rate, ...). Absent: no ladder (version 16; before, a list
	// per ladder flag: levels, rates, slots_levels, rtt_levels_ms, pool_levels).
	Ladder map[string][]Value `json:"ladder,omitempty" flag:"-" shapes:"no"`

	// Rate is the run's offered rate in requests per second (--rate, or a --rates rung); absent:
	// a closed loop, and the open-loop settings below are left out with it.
	Rate float64 `json:"rate,omitempty" usage:"open loop: requests per second for the whole invocation, arriving on a schedule whatever the database does; latency counts from each request's intended start, --concurrency caps the requests in flight (default: closed loop)" shapes:"yes" split:"producer"`
	// Arrivals is how arrivals are spaced: poisson or uniform.
	Arrivals string `json:"arrivals,omitempty" default:"poisson" usage:"open loop: how arrivals are spaced, poisson (independent clients) or uniform (evenly), drawn from --seed" shapes:"yes" split:"producer"`
	// RampMs is the linear climb to the rate at the start.
	RampMs float64 `json:"ramp_ms,omitempty" flag:"ramp" unit:"ms" usage:"open loop: climb linearly from 0 to the rate over this long first; left out of the statistics like --warmup" shapes:"yes" split:"producer"`
	// MaxLagMs skips a request whose turn comes this much after its intended start (0: none).
	MaxLagMs float64 `json:"max_lag_ms,omitempty" flag:"max-lag" unit:"ms" usage:"open loop: a request whose turn comes more than this after its intended start is counted skipped and not sent (pgbench's --latency-limit skipping)" shapes:"yes" split:"producer"`
	// SLOP99Ms judges a rate ladder or a pool ladder afterwards; it shapes no run.
	SLOP99Ms float64 `json:"slo_p99_ms,omitempty" usage:"with --rates: the latency objective; the ladder names each mode's highest rate with p99 within it and ≥ 95% of its arrivals sent (max_rate_at_slo); with --pool-levels: each mode's pool size of highest throughput with p99 within it" shapes:"no"`

	// Slots is the physical rows each hot logical row was split into; left out when there was
	// one (as in a suite without slots).
	Slots int `json:"slots,omitempty" default:"1" min:"1" max:"1024" usage:"split each hot counter row into this many physical rows (slots, 1..1024); a write adds to one, a read sums them (1: one row, as without slots)" shapes:"yes"`
	// SlotPick is how a write picked its slot; left out with one slot.
	SlotPick string `json:"slot_pick,omitempty" default:"hash" usage:"how a write picks its slot: hash (of the request id), random, round-robin (request index mod N), or session (the writing connection's seat in the pool mod N)" shapes:"yes"`

	// DBRTTMs is the round trip added to the service's connections to PostgreSQL (--db-rtt,
	// or the run's --rtt-levels rung), DBRTTJitterMs its spread; RedisRTTMs and
	// RedisRTTJitterMs the same to Redis. Each round trip a transaction makes while it holds a
	// hot row's lock adds to every other writer's wait, so the delay shapes the work.
	DBRTTMs          float64 `json:"db_rtt_ms,omitempty" flag:"db-rtt" unit:"ms" usage:"round trip added to every connection of the load, flushers, outbox and consumers to the database, e.g. 200us or 1ms (half each way, through an in-process proxy; at most 1s); the monitor and calibration connect directly" shapes:"yes"`
	DBRTTJitterMs    float64 `json:"db_rtt_jitter_ms,omitempty" flag:"db-rtt-jitter" unit:"ms" usage:"with --db-rtt: spread each round trip uniformly over ±this (at most --db-rtt; bytes keep their order)" shapes:"yes"`
	RedisRTTMs       float64 `json:"redis_rtt_ms,omitempty" flag:"redis-rtt" unit:"ms" usage:"round trip added to the queue's connections to Redis (--queue-backend redis, any --redis), as --db-rtt" shapes:"yes"`
	RedisRTTJitterMs float64 `json:"redis_rtt_jitter_ms,omitempty" flag:"redis-rtt-jitter" unit:"ms" usage:"with --redis-rtt: spread each round trip over ±this (at most --redis-rtt)" shapes:"yes"`

	// Pooler is the connection pooler every connection of the service goes through
	// ("pgbouncer"; absent: none): a temporary PgBouncer (--pooler pgbouncer) or an existing
	// one (PoolerURL). PoolerMode is its pool mode, PoolerPoolSize its server connections for
	// the run's database (read from the pooler's own configuration with --pooler-url), and
	// PoolerRTTMs the round trip added between the service and the pooler (DBRTTMs is then
	// the round trip between the pooler and PostgreSQL). All left out without a pooler.
	Pooler         string  `json:"pooler,omitempty" default:"none" enum:"none|pgbouncer" usage:"put a connection pooler between the service and PostgreSQL: pgbouncer (a temporary PgBouncer from PATH in front of the temporary server or --postgres-url); the load, flushers, outbox and consumers connect through it, the monitor and calibration directly" shapes:"yes"`
	PoolerMode     string  `json:"pooler_mode,omitempty" default:"transaction" enum:"transaction|session" usage:"with --pooler: its pool mode, transaction (a server connection per transaction) or session (per client connection)" shapes:"yes"`
	PoolerPoolSize int     `json:"pooler_pool_size,omitempty" default:"16" min:"1" max:"10000" usage:"with --pooler: server connections the pooler opens to PostgreSQL for the run's database (its default_pool_size, and its max_db_connections)" shapes:"yes"`
	PoolerURL      string  `json:"pooler_url,omitempty" usage:"use this existing PgBouncer by its admin console's URL (postgres://user:pass@host:port/pgbouncer; e.g. baseline pgbouncer's): the service connects to its host and port, its mode and pool size are read from it" shapes:"no"`
	PoolerRTTMs    float64 `json:"pooler_rtt_ms,omitempty" flag:"pooler-rtt" unit:"ms" usage:"with --pooler: round trip added between the service and the pooler, as --db-rtt (which then delays the pooler's hop to PostgreSQL)" shapes:"yes"`

	// Faults are the injected faults as --fault gave them (terminate-backends@3s, ...).
	Faults []string `json:"faults,omitempty" flag:"fault" shapes:"yes" split:"process"`
	// FaultEveryMs is a soak's rotating fault interval (0: no soak).
	FaultEveryMs float64 `json:"fault_every_ms,omitempty" flag:"fault-every" unit:"ms" usage:"soak: with --duration, strike a fault this often (e.g. 30s), rotating through every timed fault the suite, mode and flags allow; the report adds RSS and goroutine growth after the first minute and each fault's recovery time" shapes:"yes" split:"process"`

	// DebugLoseCommitEvery is a test hook: every Nth first COMMIT reports its outcome unknown.
	DebugLoseCommitEvery int64 `json:"debug_lose_commit_every,omitempty" min:"0" hidden:"true" usage:"sync and outbox: every Nth request's first COMMIT succeeds but reports its outcome unknown, as when the reply is lost (tests exactly-once retries)" shapes:"yes" split:"producer"`
	// DebugSlowFlushPct is a test hook: every in-memory queue flush waits this percentage of
	// its own duration after its COMMIT (a build slower by a known amount).
	DebugSlowFlushPct int `json:"debug_slow_flush_pct,omitempty" min:"0" hidden:"true" usage:"async modes, memory queue: every flush takes this percentage of its own duration longer, in processor work (a build slower by a known amount, for baseline ab)" shapes:"yes" split:"consumer"`

	// Suite holds the suite's own flags (those it registers itself), by snake_case flag name,
	// each value as the flag holds it (a number, string, bool or list). Every one shapes the
	// work. A key one report has and the other lacks is a flag one binary has and the other
	// does not: baseline compare takes it as that flag's default unless the report's command
	// line set it.
	Suite map[string]any `json:"suite,omitempty"`
}

// Setting is one field of RunConfig as the report, the flags and the comparison know it.
type Setting struct {
	// Key is the field's JSON key in a run's config.
	Key string
	// Flag is the flag that sets it, without the dashes ("" when none does: managed_postgres).
	Flag string
	// Shapes is true when the setting shapes the work, so two runs that differ in it measured
	// different things.
	Shapes bool
	// Split is the field's `split` tag: "" when every process of a split run must agree on
	// the setting, else "producer", "consumer" or "process" (see RunConfig).
	Split string

	// The flag as the field's tags declare it (see RunConfig), for package plan. Usage is ""
	// when the flag is declared in code (or there is none), and so are the others.
	Usage   string
	Default string   // as the command line gives it; "": the zero value
	Min     string   // a number's lower bound, inclusive ("": none)
	Max     string   // a number's upper bound, inclusive ("": none)
	Enum    []string // the values a string may take (nil: any)
	Unit    string   // UnitMs: a float64 of milliseconds given as a Go duration
	Hidden  bool     // left out of --help

	field int
}

// UnitMs is the `unit` tag of a RunConfig field in milliseconds whose flag takes a Go duration.
const UnitMs = "ms"

// settings is RunConfig's fields read once from its tags.
var settings = sync.OnceValue(func() []Setting {
	t := reflect.TypeFor[RunConfig]()
	var out []Setting
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "Suite" {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		flag := f.Tag.Get("flag")
		switch flag {
		case "":
			flag = strings.ReplaceAll(key, "_", "-")
		case "-":
			flag = ""
		}
		shapes, ok := map[string]bool{"yes": true, "no": false}[f.Tag.Get("shapes")]
		if !ok {
			panic(fmt.Sprintf("results: RunConfig.%s has no shapes:\"yes\" or shapes:\"no\" tag", f.Name))
		}
		split := f.Tag.Get("split")
		if !slices.Contains([]string{"", SplitProducer, SplitConsumer, SplitProcess}, split) {
			panic(fmt.Sprintf("results: RunConfig.%s has an unknown split tag %q", f.Name, split))
		}
		s := Setting{Key: key, Flag: flag, Shapes: shapes, Split: split, field: i, Usage: f.Tag.Get("usage"),
			Default: f.Tag.Get("default"), Min: f.Tag.Get("min"), Max: f.Tag.Get("max"), Unit: f.Tag.Get("unit"),
			Hidden: f.Tag.Get("hidden") == "true"}
		if e := f.Tag.Get("enum"); e != "" {
			s.Enum = strings.Split(e, "|")
		}
		if err := s.checkFlagTags(f); err != nil {
			panic(fmt.Sprintf("results: RunConfig.%s: %v", f.Name, err))
		}
		out = append(out, s)
	}
	return out
})

// checkFlagTags checks the tags that declare the flag of field f, s: what they are, and that they fit f.
func (s Setting) checkFlagTags(f reflect.StructField) error {
	kind := f.Type.Kind()
	number := kind == reflect.Int || kind == reflect.Int64 || kind == reflect.Float64
	switch {
	case s.Usage == "" && (s.Default != "" || s.Min != "" || s.Max != "" || s.Enum != nil || s.Unit != "" || s.Hidden):
		return errors.New("tags of a flag but no usage tag (the flag it declares)")
	case s.Usage != "" && s.Flag == "":
		return errors.New(`a usage tag and flag:"-"`)
	case s.Usage != "" && !number && kind != reflect.String && kind != reflect.Bool:
		return fmt.Errorf("a flag of type %s (a list is parsed in code: no usage tag)", f.Type)
	case (s.Min != "" || s.Max != "") && !number:
		return fmt.Errorf("min or max on a %s", f.Type)
	case s.Enum != nil && (kind != reflect.String || !slices.Contains(s.Enum, s.Default)):
		return errors.New("an enum on other than a string, or without its default among its values")
	case s.Unit != "" && (s.Unit != UnitMs || kind != reflect.Float64):
		return fmt.Errorf("unit %q on a %s (only ms on a float64)", s.Unit, f.Type)
	case !slices.Contains([]string{"", "true"}, f.Tag.Get("hidden")):
		return fmt.Errorf("hidden tag %q (want true or none)", f.Tag.Get("hidden"))
	}
	for _, b := range []string{s.Min, s.Max} {
		if _, err := strconv.ParseFloat(b, 64); b != "" && err != nil {
			return fmt.Errorf("bound %q is not a number", b)
		}
	}
	return nil
}

// Addr is the address of the setting's field in c: *int, *int64, *float64, *string, *bool, or
// a list's.
func (s Setting) Addr(c *RunConfig) any {
	return reflect.ValueOf(c).Elem().Field(s.field).Addr().Interface()
}

// TakeSplit sets every setting of c whose split tag is split to from's: baseline merge takes
// the consumers' settings (SplitConsumer) from a consumer's config so.
func (c *RunConfig) TakeSplit(split string, from RunConfig) {
	dst, src := reflect.ValueOf(c).Elem(), reflect.ValueOf(from)
	for _, s := range settings() {
		if s.Split == split {
			dst.Field(s.field).Set(src.Field(s.field))
		}
	}
}

// The split tags of RunConfig (Setting.Split).
const (
	SplitProducer = "producer"
	SplitConsumer = "consumer"
	SplitProcess  = "process"
)

// Settings lists the settings of RunConfig (the suite's own aside), in field order.
func Settings() []Setting { return slices.Clone(settings()) }

// LookupSetting finds a setting of RunConfig by its key or its flag name ("duration_ms" or
// "duration"); ok is false for any other name, a suite's own flag included.
func LookupSetting(name string) (s Setting, ok bool) {
	for _, s := range settings() {
		if s.Key == name || (s.Flag != "" && s.Flag == name) {
			return s, true
		}
	}
	return Setting{}, false
}

// SettingKey is the config key a name stands for: the key of the setting LookupSetting finds,
// else a suite flag's key (its flag name in snake_case).
func SettingKey(name string) string {
	if s, ok := LookupSetting(name); ok {
		return s.Key
	}
	return suiteKey(name)
}

// SuiteFlag is the flag name of a key of RunConfig.Suite.
func SuiteFlag(key string) string { return strings.ReplaceAll(key, "_", "-") }

func suiteKey(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// NonShapingKeys lists the keys of the settings that shape nothing, sorted.
func NonShapingKeys() []string {
	var out []string
	for _, s := range settings() {
		if !s.Shapes {
			out = append(out, s.Key)
		}
	}
	slices.Sort(out)
	return out
}

// Shaping returns the settings of c that shape the work, by key, each value as canonical JSON
// (so that an int in memory and the number read back compare equal): every setting of
// RunConfig (of c.Canonical(), at its off value when that leaves it out), then each of c.Suite. A suite key
// never collides with another: the suite's flags and the engine's share one flag set.
func (c RunConfig) Shaping() map[string]string {
	c = c.Canonical()
	v := reflect.ValueOf(c)
	out := make(map[string]string)
	for _, s := range settings() {
		if s.Shapes {
			out[s.Key] = canonicalJSON(v.Field(s.field).Interface())
		}
	}
	for k, val := range c.Suite {
		out[k] = canonicalJSON(val)
	}
	return out
}

func canonicalJSON(v any) string {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.Len() == 0 {
		return "[]" // a nil list and an empty one are the same setting
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Canonical is c with every setting that has no effect under the others left out: the retry
// settings when a request is tried once (MaxTries ≤ 1), the open-loop settings of a closed
// loop (Rate 0; the objective kept on a ladder whose rule judges by it), the slot count and pick
// when there was one slot, HotKeyDist "uniform" and any
// distribution over one hot key, and RedisPersist "off". Empty lists become nil.
func (c RunConfig) Canonical() RunConfig {
	if c.HotKeyDist == "uniform" || c.HotKeys <= 1 {
		c.HotKeyDist = ""
	}
	if c.MaxTries <= 1 {
		c.MaxTries, c.RetryBackoffMs, c.RetryClasses = 0, 0, nil
	}
	if c.Rate == 0 {
		c.Arrivals, c.RampMs, c.MaxLagMs = "", 0, 0
		if !c.JudgedByObjective() { // a pool ladder is judged by the objective in a closed loop
			c.SLOP99Ms = 0
		}
	}
	if c.Slots <= 1 {
		c.Slots, c.SlotPick = 0, ""
	}
	if c.RedisPersist == "off" {
		c.RedisPersist = ""
	}
	if c.Pooler == "none" {
		c.Pooler = ""
	}
	if c.Pooler == "" {
		c.PoolerMode, c.PoolerPoolSize, c.PoolerRTTMs = "", 0, 0
	}
	if c.StreamShards == 1 {
		c.StreamShards = 0
	}
	if c.Database == "postgres" {
		c.Database = ""
	}
	if c.Database == "" {
		c.InnoDBDeadlockDetect, c.InnoDBLockWaitTimeoutMs, c.InnoDBFlushLogAtTrxCommit = "", 0, ""
	}
	for _, l := range []*[]string{&c.Modes, &c.RetryClasses, &c.Faults} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if len(c.Ladder) == 0 {
		c.Ladder = nil
	}
	if len(c.Suite) == 0 {
		c.Suite = nil
	}
	return c
}

// JudgedByObjective says c's invocation stepped over an axis whose rule judges its levels by
// the latency objective (a pool ladder's best size).
func (c RunConfig) JudgedByObjective() bool {
	for name := range c.Ladder {
		if a := AxisNamed(name); a != nil && a.Rule != nil && a.Rule.Objective {
			return true
		}
	}
	return false
}

// NewRunConfig is the configuration the engine records for one run: c (the engine's settings,
// URLs already redacted, durations converted with Milliseconds) with suiteFlags, the values
// of the suite's own flags by flag name, as its Suite, made Canonical.
func NewRunConfig(c RunConfig, suiteFlags map[string]any) RunConfig {
	if len(suiteFlags) > 0 {
		c.Suite = make(map[string]any, len(suiteFlags))
		for name, v := range suiteFlags {
			c.Suite[suiteKey(name)] = v
		}
	}
	return c.Canonical()
}

// Milliseconds is d in the milliseconds of a RunConfig duration.
func Milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Duration is a RunConfig duration in milliseconds as a time.Duration, to the nearest
// nanosecond: Duration(Milliseconds(d)) is d for any d under 26 days.
func Duration(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}
