package results

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hotspotkit/hotspotkit/results/units"
)

// SchemaVersion is the version of the format this package writes: of the report and of its
// samples file. It moves on every change to either, an added field included, and Read
// upgrades a report of every earlier version to it (upgrade.go), so that no reader has to
// cope with an older one. The versions:
//
//  1. The first format. A run's config is a map of flag names ("flush-batch-size", durations
//     as Go durations) with managed_postgres and the suite's own flags among them. Fields
//     were added within version 1 without a bump, so a version 1 report may lack any field
//     whose doc says what its absence means (Database, Calibration, Retries, ...).
//  2. A run's config is a RunConfig: snake_case keys, durations in milliseconds (_ms keys),
//     the suite's own flags under "suite", the run's mode no longer repeated in it, and the
//     settings that have no effect under the others left out.
//  3. Slot ladders apart from concurrency ladders (slot_ladders; a ladder no longer names
//     what it steps over, and each kind has only its own fields), and the samples file opens
//     with a SamplesHeader; an in-memory queue's run has Queue.FlushTime, where its flushing
//     time went (absent before: not measured).
//  4. The network: the round trips the probes measured (environment.network, a run's
//     network), a run's rtt_ms and fault_outcome, the config's db_rtt_ms, db_rtt_jitter_ms,
//     redis_rtt_ms, redis_rtt_jitter_ms and rtt_levels_ms, and RTT ladders (rtt_ladders).
//     Only additions: a version 3 report reads as one measured over the direct path.
//  5. A run's leftover: the goroutines and TCP sockets the process held before the run and
//     after it had closed everything. Only an addition: absent, it was not measured.
//  6. A run's request_time: where the request path's time went, the client's view of its
//     statements beside the server's. Only an addition: absent, it was not measured.
//  7. A run's figures: a suite's own measurements of the run (a job queue's claim latency,
//     time in queue, table growth), each a name, a value and a unit. Only an addition:
//     absent, the suite had none.
//  8. What merging the reports of a split run needs: the HDR histograms behind a queue's
//     persist lag, a load's pool wait and the monitor's total reads, the wall-clock start of a run's measured window
//     (load.measured_from), the process id in the environment, and a merged report's
//     processes (baseline merge). Only additions: absent, they were not recorded, and the
//     report is one process's.
//  9. The Redis a queue ran on (environment.redis_topology: one server or a cluster, its
//     masters and replicas, the streams per queue) and the config's redis_replicas and
//     stream_shards. Only additions: absent, one server and one stream.
//  10. The HDR histograms behind the network probes' round trips (a path's rtt_histogram and
//     direct_rtt_histogram), so that baseline merge joins the processes' networks. Only
//     additions: absent, they were not recorded, and a merge leaves the network out.
//  11. The sessions opened in a run's window (database.sessions), whose startup transactions
//     database.xact_commit no longer counts. No conversion: an older report's xact_commit
//     counts them (a few per run, one per connection a pool opened).
//  12. How often autovacuum ran on the database in a run's window (database.autovacuums):
//     its transactions are in xact_commit, and this says when. Only an addition: absent, it
//     was not recorded.
//  13. The filesystem a temporary server's data directory was on
//     (environment.postgres_data_fs): on tmpfs an fsync costs nothing, so durability "on"
//     does not cost what it would on a disk. Only an addition: absent, it was not recorded.
//  14. Skewed hot keys: the config's hot_key_dist (absent: uniform), a run's hot_sets (how
//     its applied requests spread over the hot key sets; absent: not recorded), and a
//     queue's writes_per_update (queued writes per write sent after compaction, worked out
//     from the queue's counters when an older report is read).
//  15. The pool-size ladder: pool_ladders (--pool-levels), a run's pool_size on one, a
//     summary's pool_size, and the config's pool_levels (and its slo_p99_ms kept in a closed
//     loop that judges a pool ladder). Only additions: absent, no pool ladder was run.
//  16. A check's state: passed, failed or not_checked (with its reason), in place of its ok;
//     a run with a check not made is not verified. An older report's checks read passed or
//     failed by their ok, and its placeholders of a check not made ("not checked" or empty
//     expected and actual) not_checked, which leaves their run unverified.
//  17. One ladder shape for every axis (Axis): ladders is a list of Ladder (axis, mode,
//     levels of a value and figures, the rule's found value), where concurrency ladders,
//     slot_ladders, rtt_ladders, pool_ladders and rate_ladders each had a type of their own;
//     a run's position on every axis is its config alone (the run's level, rate, slots,
//     rtt_ms and pool_size go), the axes its invocation stepped over the config's ladder
//     (for levels, rates, slots_levels, rtt_levels_ms and pool_levels), and a summary's rung
//     its at (for its level, rate, slots, rtt_ms and pool_size). Converted (upgradeLadders).
//  18. The advice of --advise (advice: the objectives, every configuration tried and why each
//     cheaper one failed, the answer, its runner-up and confirmation, its headroom), and the
//     config's flush_interval_ms as an axis (--flush-interval-levels). Only additions: absent,
//     the invocation did not search.
//  19. The database's kind (MySQL and MariaDB beside PostgreSQL): the environment's
//     database_kind, and its postgres_version, postgres_settings, managed_postgres,
//     postgres_start_ms, postgres_url and postgres_data_fs renamed database_*; the config's
//     database and InnoDB's innodb_* settings (absent: PostgreSQL) and mysql_url; a run's
//     InnoDB figures; a calibration's why (skipped on MySQL). Converted (upgradeDatabaseKind):
//     an older report's database is PostgreSQL.
//  20. The database's kind as an axis (--databases): the environment's databases, one server
//     per kind a kind ladder ran on, each with its kind, version and settings. Only an
//     addition: absent, the report's runs ran on the one server the environment's database_*
//     fields describe.
//  21. The advice's headroom steps say which ran at the full length (full) and how long each
//     was (length_ms): the ramp screens its steps and runs only its knee at the full length.
//     Converted: an older step ran at the full length (full true). And a kind ladder's
//     databases say each server's url and schema (a server by URL on the axis); absent, the
//     servers were temporary ones.
const SchemaVersion = 21

// Report is one invocation of one suite binary.
type Report struct {
	SchemaVersion int         `json:"schema_version"`
	Suite         string      `json:"suite"`
	StartedAt     time.Time   `json:"started_at"`
	FinishedAt    time.Time   `json:"finished_at"`
	Interrupted   bool        `json:"interrupted"`
	Environment   Environment `json:"environment"`
	// SamplesFile names the NDJSON file holding every monitor sample of every run.
	SamplesFile string `json:"samples_file,omitempty"`
	Runs        []Run  `json:"runs"`
	// Summaries holds one entry per mode (and ladder level) when runs were repeated.
	Summaries []Summary `json:"summaries,omitempty"`
	// Ladders holds, for each axis the invocation stepped over (--levels, --slots-levels,
	// --rtt-levels, --pool-levels, --rates, ...), one ladder per mode (version 16; before, one
	// list per kind of ladder).
	Ladders []Ladder `json:"ladders,omitempty"`
	// Advice is what --advise found (version 18): the runs are its trials, and the ladders
	// and summaries are left out (its runs differ in more than one axis and in length).
	Advice *Advice `json:"advice,omitempty"`
	// Error is the failure that ended the invocation early, if any.
	Error string `json:"error,omitempty"`
	// Processes lists, in a report merged from the reports of one split run (baseline merge),
	// the processes whose reports it was merged from, each with its own environment; absent in
	// one process's report (version 8).
	Processes []Process `json:"processes,omitempty"`
}

// Process is one process of a split run, as a merged report lists it: its role, which report
// it wrote, where it ran.
type Process struct {
	// Role is producer or consumer; ProducerID a producer's --producer-id; Verify is true for
	// the consumer that verified the whole run (--verify).
	Role       string `json:"role"`
	ProducerID int    `json:"producer_id,omitempty"`
	Verify     bool   `json:"verify,omitempty"`
	// Hostname and PID say where it ran (PID 0: not recorded, in a report before version 8).
	Hostname string `json:"hostname,omitempty"`
	PID      int    `json:"pid,omitempty"`
	// Report is the report file it was merged from, as given to baseline merge.
	Report     string    `json:"report"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	// Environment is the process's own environment (hosts may differ).
	Environment Environment `json:"environment"`
}

// Environment records what the numbers were measured on.
type Environment struct {
	GoVersion   string `json:"go_version"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	NumCPU      int    `json:"num_cpu"`
	CPUModel    string `json:"cpu_model"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Hostname    string `json:"hostname,omitempty"`
	// PID is the process id of the invocation (version 8; 0: not recorded).
	PID          int    `json:"pid,omitempty"`
	MachineClass string `json:"machine_class"`
	// DatabaseKind is the kind of the run's database: "postgres", "mariadb" or "mysql"
	// (version 19; a report before it was PostgreSQL's). DatabaseVersion is its version as
	// the server says it (PostgreSQL's server_version, MySQL's @@version), DatabaseSettings
	// the settings that shape the numbers (version 19: before, postgres_version and
	// postgres_settings).
	DatabaseKind     string            `json:"database_kind"`
	DatabaseVersion  string            `json:"database_version"`
	DatabaseSettings map[string]string `json:"database_settings"`
	// ManagedDatabase is true when the invocation started the server itself (a temporary
	// one), DatabaseStartMs how long its first start took (version 19: before,
	// managed_postgres and postgres_start_ms).
	ManagedDatabase bool    `json:"managed_database"`
	DatabaseStartMs float64 `json:"database_start_ms"`
	// Databases lists, on a ladder over the database's kind (--databases, version 20), every
	// server the runs ran on, one per kind in the ladder's order (a run's is its config's
	// kind: Server); the database_* fields above are then the first's. Absent: one server,
	// the one those fields describe.
	Databases []DatabaseServer `json:"databases,omitempty"`
	// DatabaseURL is the server used, with the password redacted (version 19: before,
	// postgres_url).
	DatabaseURL string `json:"database_url,omitempty"`
	Schema      string `json:"schema"`
	// Durability is "on" (fsync and synchronous_commit on; InnoDB's redo log flushed at every
	// commit and its doublewrite buffer on) or "unsafe".
	Durability string `json:"durability"`
	// DatabaseDataFS is the filesystem a temporary server's data directory was on ("ext4",
	// "tmpfs", …; version 13, postgres_data_fs before version 19). Empty on a server given by
	// URL, whose disk this process cannot see. On tmpfs (DataInMemory) an fsync writes nothing
	// to a disk: commits cost far less than on the disk a production server has.
	DatabaseDataFS string `json:"database_data_fs,omitempty"`
	QueueBackend   string `json:"queue_backend,omitempty"`
	RedisMode      string `json:"redis_mode,omitempty"`
	RedisVersion   string `json:"redis_version,omitempty"`
	// RedisTopology is the Redis the queue ran on: one server or a cluster, and the streams
	// each run's queue was spread over (version 8; absent: one server, one stream).
	RedisTopology *RedisTopology `json:"redis_topology,omitempty"`
	GitRevision   string         `json:"git_revision"`
	Command       string         `json:"command,omitempty"`
	// Calibration is what this machine's PostgreSQL managed on the run's own server before the
	// first run (nil in reports written before calibration existed).
	Calibration *Calibration `json:"calibration,omitempty"`
	// Network is the round trips the probes measured over every run (version 4).
	Network *Network `json:"network,omitempty"`
	// Merged is set in a report merged from several processes' (baseline merge): the fields
	// above hold what every process agreed on and are empty where they differed; each
	// process's own environment is in Report.Processes (version 8).
	Merged bool `json:"merged,omitempty"`
}

// DatabaseServer is one server of a ladder over the database's kind, as the environment's
// database_* fields describe the one server of any other report.
type DatabaseServer struct {
	Kind     string            `json:"kind"`
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings"`
	Managed  bool              `json:"managed"`
	StartMs  float64           `json:"start_ms"`
	// Durability is as the environment's; DataFS the filesystem of the server's data
	// directory.
	Durability string `json:"durability"`
	DataFS     string `json:"data_fs,omitempty"`
	// URL is a server given by URL (--postgres-url, --mysql-url), its password redacted;
	// absent on a temporary one. Schema is the run's place on it, a schema (PostgreSQL) or a
	// database (MySQL): each server's own. Both absent in a report before they were recorded.
	URL    string `json:"url,omitempty"`
	Schema string `json:"schema,omitempty"`
}

// ServerOf is the environment's database_* fields as one server.
func (e Environment) ServerOf() DatabaseServer {
	return DatabaseServer{Kind: e.kind(), Version: e.DatabaseVersion, Settings: e.DatabaseSettings, Managed: e.ManagedDatabase,
		StartMs: e.DatabaseStartMs, Durability: e.Durability, DataFS: e.DatabaseDataFS, URL: e.DatabaseURL, Schema: e.Schema}
}

// Servers are the servers the report's runs ran on: the kind ladder's (Databases), else the
// one of the database_* fields.
func (e Environment) Servers() []DatabaseServer {
	if len(e.Databases) > 0 {
		return e.Databases
	}
	return []DatabaseServer{e.ServerOf()}
}

// Kinds are the kinds of database the report's runs ran on, in the environment's order.
func (e Environment) Kinds() []string {
	var out []string
	for _, s := range e.Servers() {
		out = append(out, s.Kind)
	}
	return out
}

// Server is the server of kind the report's runs of that kind ran on (false: none).
func (e Environment) Server(kind string) (DatabaseServer, bool) {
	for _, s := range e.Servers() {
		if s.Kind == kind {
			return s, true
		}
	}
	return DatabaseServer{}, false
}

// kind is the environment's database's kind: postgres where a report names none.
func (e Environment) kind() string {
	if e.DatabaseKind == "" {
		return "postgres"
	}
	return e.DatabaseKind
}

// KindName names a database's kind as a reader knows it: PostgreSQL, MariaDB or MySQL
// (PostgreSQL for "": before MySQL there was one kind).
func KindName(kind string) string {
	switch kind {
	case "mariadb":
		return "MariaDB"
	case "mysql":
		return "MySQL"
	}
	return "PostgreSQL"
}

// DataInMemory reports whether the temporary server's data directory was on a filesystem
// kept in memory (tmpfs, ramfs), where durability "on" costs no disk write.
func (e Environment) DataInMemory() bool {
	return e.DatabaseDataFS == "tmpfs" || e.DatabaseDataFS == "ramfs"
}

// DurabilityText is the durability as a summary states it: "on", "unsafe", or "on (data on
// tmpfs: fsync costs nothing)".
func (e Environment) DurabilityText() string {
	if e.Durability == "on" && e.DataInMemory() {
		return "on (data on " + e.DatabaseDataFS + ": fsync costs nothing)"
	}
	return e.Durability
}

// RedisTopology is the shape of the Redis a run's queue ran on.
type RedisTopology struct {
	// Cluster is true on a Redis Cluster.
	Cluster bool `json:"cluster"`
	// Masters and ReplicasPerMaster are a cluster's (1 and 0 for one server).
	Masters           int `json:"masters"`
	ReplicasPerMaster int `json:"replicas_per_master"`
	// StreamShards is the streams each run's queue was spread over (--stream-shards).
	StreamShards int `json:"stream_shards"`
}

// Calibration measures the machine, not the code: reference rates taken once per invocation on
// the run's own server, so that throughput from two machines can be compared as efficiency.
// Each rate is the spread over a few short windows; two calibrations "agree" when their
// medians lie within each other's noise.
type Calibration struct {
	// Skipped is set when the machine was not calibrated (--calibrate=false, or Why); every
	// other field is then zero.
	Skipped bool `json:"skipped,omitempty"`
	// Why says why it was skipped when it was not --calibrate=false: "not calibrated on
	// MySQL" (the calibration measures PostgreSQL). Absent: --calibrate=false.
	Why string `json:"why,omitempty"`
	// HotRowUpdateRPS1 is single-row UPDATEs per second on one hot row over 1 connection.
	HotRowUpdateRPS1 Spread `json:"hot_row_update_rps_1conn"`
	// HotRowUpdateRPSPool is the same on PoolConns connections (what pgbench on one row measures).
	HotRowUpdateRPSPool Spread `json:"hot_row_update_rps_pool"`
	PoolConns           int    `json:"pool_conns"`
	// BatchedWriteRowsPerSec is rows per second of COPY in 1,000-row batches of a usage-like row
	// plus one counter UPDATE per transaction, on BatchedWriteConns connections.
	BatchedWriteRowsPerSec Spread `json:"batched_write_rows_per_s"`
	BatchedWriteConns      int    `json:"batched_write_conns"`
	// Windows is how many windows each rate was measured over; WindowMs the length of each.
	Windows  int     `json:"windows"`
	WindowMs float64 `json:"window_ms"`
	// DurationMs is the calibration's whole cost in wall time.
	DurationMs float64 `json:"duration_ms"`
}

// Run is one mode run once (one repetition, one ladder level) on freshly reset state.
type Run struct {
	Mode string `json:"mode"`
	// Repetition counts from 1; 0 when --repeat was not given.
	Repetition int `json:"repetition,omitempty"`
	// Config is the run's configuration: every setting the engine records, and which of them
	// shape the work (see RunConfig). It is also where the run stood on every axis (Axis.Of:
	// its concurrency, slots, round trip, pool size, rate, ...), and which of them its
	// invocation stepped over (Config.Ladder; Rung).
	Config      RunConfig   `json:"config"`
	StartedAt   time.Time   `json:"started_at"`
	Load        Load        `json:"load"`
	Pool        Pool        `json:"pool"`
	LockMonitor LockMonitor `json:"lock_monitor"`
	// Pooler is what the pooler between the service and PostgreSQL showed (--pooler; absent
	// without one).
	Pooler         *Pooler         `json:"pooler,omitempty"`
	Flush          *Flush          `json:"flush,omitempty"`
	Queue          *Queue          `json:"queue,omitempty"`
	Verification   Verification    `json:"verification"`
	Reconciliation *Reconciliation `json:"reconciliation,omitempty"`
	Faults         []FaultEvent    `json:"faults,omitempty"`
	// Soak is what a long run with --fault-every shows: growth after the first minute and
	// how long each fault took to recover from.
	Soak *Soak `json:"soak,omitempty"`
	// Database is the database's own account of the run (nil in older reports).
	Database *Database `json:"database,omitempty"`
	// RequestTime is where the request path's time went (nil when it sent no statement, as
	// a queue mode's requests only enqueue, and in reports before version 6).
	RequestTime *RequestTime `json:"request_time,omitempty"`
	// Generator is what the load generator itself cost over the run, and the local server's
	// processor time beside it (absent: not measured, a report written before it).
	Generator *Generator `json:"generator,omitempty"`
	// Efficiency is throughput over the machine's calibrated rate (0 without calibration):
	// sync-style modes' completed requests/s over Calibration.HotRowUpdateRPSPool, queue modes'
	// persisted records/s over Calibration.BatchedWriteRowsPerSec. EfficiencyBasis names which.
	Efficiency      float64 `json:"efficiency,omitempty"`
	EfficiencyBasis string  `json:"efficiency_basis,omitempty"`
	// Network is the round trips the run's probes measured (version 4).
	Network *Network `json:"network,omitempty"`
	// FaultOutcome is how the requests came through the run's timed faults (version 4).
	FaultOutcome *FaultOutcome `json:"fault_outcome,omitempty"`
	// Leftover is what the process held before the run and after the run had released
	// everything it opened (version 5; nil before).
	Leftover *Leftover `json:"leftover,omitempty"`
	// Figures are the suite's own measurements of the run, in the order it gave them
	// (version 7; absent when the suite has none).
	Figures []Figure `json:"figures,omitempty"`
	// HotSets is how the run's applied requests spread over its hot key sets, for a suite whose
	// requests each write one set (version 14; absent for any other suite, a run not verified,
	// and before).
	HotSets     *HotSets `json:"hot_sets,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// Database is what PostgreSQL's statistics views say a run cost: deltas over the run's measured
// window, read on the engine's own connection, never on the load's.
type Database struct {
	// WALBytes, WALRecords and WALFullPageImages come from pg_stat_wal (PostgreSQL 14+);
	// WALSource is "pg_stat_wal", or "insert_lsn" when only the LSN difference was available
	// (records and full-page images are then 0).
	WALBytes          int64  `json:"wal_bytes"`
	WALRecords        int64  `json:"wal_records"`
	WALFullPageImages int64  `json:"wal_full_page_images"`
	WALSource         string `json:"wal_source"`
	// XactCommit and XactRollback come from pg_stat_database for the run's database. Since
	// version 11 XactCommit leaves out the transaction each session opened in the window
	// begins with (PostgreSQL 14+: Sessions counts them), so that commits per request count
	// the work and not the connections; before, it counted them.
	XactCommit   int64 `json:"xact_commit"`
	XactRollback int64 `json:"xact_rollback"`
	// Sessions is how many sessions were opened on the database in the window (every
	// process's: the service's pools, the observers', on a shared server others'), absent
	// before PostgreSQL 14 (version 11).
	Sessions int64 `json:"sessions,omitempty"`
	// Autovacuums is how many vacuums and analyzes autovacuum ran on the database's tables
	// (catalogs included) in the window (pg_stat_all_tables' autovacuum_count +
	// autoanalyze_count; version 12). Each ran in transactions of its own, which XactCommit
	// counts and cannot tell apart: where this is not 0, commits per request read a few high.
	Autovacuums int64 `json:"autovacuums,omitempty"`
	// Statements is read from pg_stat_statements when the extension is loaded (nil otherwise).
	Statements *Statements `json:"statements,omitempty"`
	// Tables holds pg_stat_user_tables of the run's schema, for every table the suite writes.
	Tables map[string]TableStats `json:"tables,omitempty"`
	// WaitEvents totals, over the run's monitor samples, the run's backends by
	// "wait_event_type:wait_event"; "active" counts active backends not waiting on anything.
	WaitEvents map[string]int64 `json:"wait_events,omitempty"`
	// PerRequest divides the figures by the run's completed requests.
	PerRequest PerRequest `json:"per_request"`
	// DatabaseWide names the figures that count every session of the server or database (other
	// sessions on a --postgres-url server add to them); the others are exact for the run's schema.
	DatabaseWide []string `json:"database_wide"`
	// Shared is true when the server was not started by this invocation (--postgres-url).
	Shared bool `json:"shared,omitempty"`
	// RedoBytes is what InnoDB wrote to its redo log in the window: the advance of its log
	// sequence number, server-wide; RedoSource names where the LSN was read
	// (innodb_lsn_current, innodb_redo_log_current_lsn, innodb_metrics, engine_status). Redo is
	// not WAL: InnoDB logs page changes of its own format, and keeps the old row versions in
	// an undo log whose pages the redo covers as well. Absent on PostgreSQL, whose log is
	// WALBytes; on InnoDB WALBytes is 0 and WALSource empty.
	RedoBytes  int64  `json:"redo_bytes,omitempty"`
	RedoSource string `json:"redo_source,omitempty"`
	// CommitSource names what XactCommit and XactRollback count where they are not
	// pg_stat_database's: "trx_rw_commits" on InnoDB, its read-write transactions committed
	// and its rollbacks (INNODB_METRICS), server-wide, read-only ones left out.
	CommitSource string `json:"commit_source,omitempty"`
	// ServerCPUSeconds is the processor time the server's process used in the window (a
	// temporary MariaDB's mariadbd: one process; absent elsewhere).
	ServerCPUSeconds float64 `json:"server_cpu_s,omitempty"`
	// InnoDB holds InnoDB's own counters over the window (absent on PostgreSQL).
	InnoDB *InnoDBStats `json:"innodb,omitempty"`
	// NotRead names the figures the server did not give, each with the reason; they are
	// absent (or 0) in the report, never estimated.
	NotRead map[string]string `json:"not_read,omitempty"`
}

// Read says whether the server gave figure (not named in NotRead: "redo_bytes",
// "xact_commit", "tables", "innodb.deadlocks", ...).
func (d *Database) Read(figure string) bool {
	_, not := d.NotRead[figure]
	return !not
}

// InnoDBStats are InnoDB's counters over a run, server-wide: every session's, the server's
// own background work included.
type InnoDBStats struct {
	// RowLockWaits and RowLockTimeMs are the row lock waits that ended in the window and the
	// time spent in them (Innodb_row_lock_waits, Innodb_row_lock_time).
	RowLockWaits  int64 `json:"row_lock_waits"`
	RowLockTimeMs int64 `json:"row_lock_time_ms"`
	// Deadlocks is the transactions InnoDB rolled back as deadlocked (error 1213: a wait-for
	// cycle, or a wait-for list too long to search), and LockWaitTimeouts the lock waits that
	// ran out (error 1205), from INNODB_METRICS' lock_deadlocks and lock_timeouts.
	Deadlocks        int64 `json:"deadlocks"`
	LockWaitTimeouts int64 `json:"lock_wait_timeouts"`
	// DataFsyncs is Innodb_data_fsyncs (on MariaDB the redo log's included); LogFsyncs is
	// MySQL's Innodb_os_log_fsyncs (absent where the redo log's are in DataFsyncs). A redo log
	// on /dev/shm is memory-mapped by MariaDB and never synced.
	DataFsyncs int64 `json:"data_fsyncs"`
	LogFsyncs  int64 `json:"log_fsyncs,omitempty"`
	// Restarted: the server started again in the window, and the counters (but the redo's LSN,
	// which survives) count from its start.
	Restarted bool `json:"restarted,omitempty"`
}

// RequestTime is where the request path's time went, per request on average: waiting for a
// pool connection, in its statements as the client saw them (from sending one to reading its
// result, timed by a tracer on the load's pool), and outside both (the request's own code, the
// Go scheduler, GC). Beside each statement, the server's own execution time for the same text
// (pg_stat_statements): the difference lies between the two — the round trips, the proxy of
// --db-rtt, the driver, both sides' waits for a CPU, and COMMIT's WAL flush, which
// pg_stat_statements does not count in COMMIT's time — while a lock wait is inside the
// server's.
// The statement figures count the whole load, warm-up included; the latency is the measured
// requests' (their service time in an open loop, without the wait for a worker).
type RequestTime struct {
	// Requests is how many requests the statement figures are divided by (all that ran).
	Requests int64 `json:"requests"`
	// LatencyMeanMs is the measured requests' mean latency (service time in an open loop).
	LatencyMeanMs float64 `json:"latency_mean_ms"`
	// AcquireMeanMs is the mean wait for a pool connection.
	AcquireMeanMs float64 `json:"acquire_mean_ms"`
	// StatementsMeanMs is the client's time in statements per request; ServerMeanMs the
	// server's execution time of the same statements per request (0: pg_stat_statements not
	// loaded).
	StatementsMeanMs float64 `json:"statements_mean_ms"`
	ServerMeanMs     float64 `json:"server_mean_ms,omitempty"`
	// OtherMeanMs is LatencyMeanMs − AcquireMeanMs − StatementsMeanMs: outside the pool and
	// the statements.
	OtherMeanMs float64 `json:"other_mean_ms"`
	// GCPauseMs is the time the process's goroutines were stopped for GC during the load.
	GCPauseMs float64 `json:"gc_pause_ms"`
	// Statements lists the request path's statements by client time, largest first.
	Statements []StatementTime `json:"statements"`
}

// StatementTime is one statement of the request path: its calls, the client's mean time on
// one and the server's mean execution time of the same text (absent when unknown; summed over
// every session that sent that text, so a COMMIT's is every pool's).
type StatementTime struct {
	Query        string  `json:"query"`
	Calls        int64   `json:"calls"`
	ClientMeanMs float64 `json:"client_mean_ms"`
	ServerMeanMs float64 `json:"server_mean_ms,omitempty"`
	// PerRequest is calls over RequestTime.Requests.
	PerRequest float64 `json:"per_request"`
}

// Statements sums pg_stat_statements over the run.
type Statements struct {
	Calls       int64       `json:"calls"`
	TotalExecMs float64     `json:"total_exec_ms"`
	Top         []Statement `json:"top,omitempty"`
}

// Statement is one normalized statement of pg_stat_statements, as a delta over the run.
type Statement struct {
	Query   string  `json:"query"`
	Calls   int64   `json:"calls"`
	Rows    int64   `json:"rows"`
	TotalMs float64 `json:"total_ms"`
	MeanMs  float64 `json:"mean_ms"`
}

// TableStats is one table's pg_stat_user_tables delta over the run (DeadTuples: at its end).
type TableStats struct {
	Inserted   int64 `json:"inserted"`
	Updated    int64 `json:"updated"`
	HotUpdated int64 `json:"hot_updated"`
	Deleted    int64 `json:"deleted"`
	DeadTuples int64 `json:"dead_tuples"`
}

// Per divides d's figures by requests (those completed in its window): its PerRequest, the
// HOT update ratios aside (they divide by no request, and are kept as d has them).
func (d *Database) Per(requests int64) PerRequest {
	p := PerRequest{HOTUpdateRatio: d.PerRequest.HOTUpdateRatio}
	if requests <= 0 {
		return p
	}
	n := float64(requests)
	var versions int64
	for _, t := range d.Tables {
		versions += t.Inserted + t.Updated + t.Deleted
	}
	p.WALBytes = units.Round(float64(d.WALBytes)/n, 1)
	p.RedoBytes = units.Round(float64(d.RedoBytes)/n, 1)
	p.ServerCPUMicros = units.Round(d.ServerCPUSeconds*1e6/n, 1)
	if i := d.InnoDB; i != nil {
		p.Fsyncs = units.Round(float64(i.DataFsyncs+i.LogFsyncs)/n, 4)
	}
	p.Commits = units.Round(float64(d.XactCommit)/n, 4)
	if d.Statements != nil {
		p.Statements = units.Round(float64(d.Statements.Calls)/n, 4)
	}
	p.RowVersions = units.Round(float64(versions)/n, 4)
	return p
}

// PerRequest is the database's cost per completed request: the machine-independent evidence
// that compaction (or anything else) changed how much work a request makes.
type PerRequest struct {
	WALBytes float64 `json:"wal_bytes_per_request"`
	Commits  float64 `json:"commits_per_request"`
	// Statements is 0 when pg_stat_statements is not loaded.
	Statements float64 `json:"statements_per_request"`
	// RowVersions counts inserted + updated + deleted rows of the suite's tables.
	RowVersions float64 `json:"row_versions_per_request"`
	// HOTUpdateRatio is hot_updated / updated per hot table (absent when nothing was updated).
	HOTUpdateRatio map[string]float64 `json:"hot_update_ratio,omitempty"`
	// RedoBytes is Database.RedoBytes per request (InnoDB; absent on PostgreSQL, whose
	// WALBytes are its log).
	RedoBytes float64 `json:"redo_bytes_per_request,omitempty"`
	// ServerCPUMicros is the server process's processor time per request, in µs (where
	// Database.ServerCPUSeconds is known).
	ServerCPUMicros float64 `json:"server_cpu_us_per_request,omitempty"`
	// Fsyncs is InnoDB's fsyncs per request (InnoDBStats.DataFsyncs + LogFsyncs): below 1 where
	// one redo flush serves several commits (group commit).
	Fsyncs float64 `json:"fsyncs_per_request,omitempty"`
}

// Load is what the load engine measured.
type Load struct {
	// DurationMs runs from the first request to the commit of the last accepted write
	// (for outbox and async modes the drain is included), so modes compare like with like.
	DurationMs float64 `json:"duration_ms"`
	// ThroughputRPS is completed requests / DurationMs: the persisted rate.
	ThroughputRPS float64 `json:"throughput_rps"`
	// IntakeMs is the time the request path took (first request start to last request end).
	IntakeMs float64 `json:"intake_ms"`
	// AcceptRPS is completed requests / IntakeMs; reported for async modes only.
	AcceptRPS         float64          `json:"accept_rps,omitempty"`
	DrainMs           float64          `json:"drain_ms"`
	Concurrency       int              `json:"concurrency"`
	CompletedRequests int64            `json:"completed_requests"`
	FailedRequests    int64            `json:"failed_requests"`
	WarmupRequests    int64            `json:"warmup_requests"`
	ErrorCounts       map[string]int64 `json:"error_counts"`
	LatencyMs         Latency          `json:"latency_ms"`
	AcquireWaitMs     Latency          `json:"acquire_wait_ms"`
	// LatencyHistogram is the HDR histogram of request latency in µs (V2 compressed, base64),
	// so reports from several processes or repetitions can be merged exactly.
	LatencyHistogram string `json:"latency_histogram,omitempty"`
	// AcquireWaitHistogram is the same behind AcquireWaitMs (version 8).
	AcquireWaitHistogram string `json:"acquire_wait_histogram,omitempty"`
	// MeasuredFrom is the wall-clock start of the measured window (after the warm-up), from
	// which DurationMs and IntakeMs run (version 8; absent before): a merge places the
	// windows of several processes on one time line with it.
	MeasuredFrom *time.Time `json:"measured_from,omitempty"`
	// Retries is what --max-tries did (absent from reports of older engines).
	Retries *Retries `json:"retries,omitempty"`
	// OpenLoop is what the arrival schedule of an open-loop run (--rate) did; absent in a
	// closed loop. LatencyMs then runs from each request's intended start.
	OpenLoop *OpenLoop `json:"open_loop,omitempty"`
	// ColdSessionRequests counts the measured requests that ran a statement on a session of
	// the load's pool that had run none before (a connection just opened: its first query pays
	// for the server's catalog caches and the driver's prepared statements), succeeded or
	// not; ColdSessionLatencyMs is the latency of those that succeeded, measured as LatencyMs,
	// and ColdSessionHistogram its HDR histogram (µs). Absent: none, or not recorded (an engine
	// before them; a queue mode's request, an enqueue, runs no statement).
	ColdSessionRequests  int64    `json:"cold_session_requests,omitempty"`
	ColdSessionLatencyMs *Latency `json:"cold_session_latency_ms,omitempty"`
	ColdSessionHistogram string   `json:"cold_session_histogram,omitempty"`
	// ConnectionsOpened is how many connections the load's pool opened in the measured window
	// (--conn-max-lifetime, --conn-max-idle and failures replace them; the warmed pool's are
	// opened before it). Absent: none, or not recorded.
	ConnectionsOpened int64 `json:"connections_opened,omitempty"`
}

// OpenLoop is an open-loop run's schedule and what became of it. Latency in Load.LatencyMs is
// measured from each request's intended start, what a client arriving on schedule sees, waits
// for a free worker included; ServiceMs from its actual start, what a closed loop would report;
// ScheduleLagMs is the difference, the time a request waited before it could start. The counts
// are of measured arrivals: each was sent (a completed or failed request), skipped or unsent.
type OpenLoop struct {
	TargetRPS float64 `json:"target_rps"`
	// AchievedRPS is measured requests sent per second of the measured window (from the end
	// of the warm-up and ramp to the deadline). Poisson arrivals scatter it around the target
	// by about 1/√scheduled even when every arrival is sent; SentShare does not.
	AchievedRPS float64 `json:"achieved_rps"`
	// Scheduled counts the measured arrivals (sent + skipped + unsent); SentShare is the share
	// of them that was sent.
	Scheduled int64   `json:"scheduled"`
	SentShare float64 `json:"sent_share"`
	// HeldRate is false when the run sent less than 95% of its arrivals (RateHeldFraction): it
	// could not keep up, and the arrivals it fell behind on waited or were never sent.
	HeldRate bool   `json:"held_rate"`
	Arrivals string `json:"arrivals"`
	// Late counts requests sent more than 1 ms after their intended start.
	Late int64 `json:"late"`
	// Skipped counts arrivals not sent because they were more than --max-lag late.
	Skipped int64 `json:"skipped"`
	// Unsent counts arrivals intended before the end of the run that never got a worker
	// before it (no request starts after --duration): the backlog left at the end.
	Unsent        int64   `json:"unsent"`
	ServiceMs     Latency `json:"service_ms"`
	ScheduleLagMs Latency `json:"schedule_lag_ms"`
	// ServiceHistogram and ScheduleLagHistogram are the HDR histograms (µs, V2 compressed,
	// base64) behind ServiceMs and ScheduleLagMs, as Load.LatencyHistogram is behind LatencyMs.
	ServiceHistogram     string `json:"service_histogram,omitempty"`
	ScheduleLagHistogram string `json:"schedule_lag_histogram,omitempty"`
}

// Retries is what the request retries (--max-tries) did over a run, warm-up included: the
// detailed failure report of pgbench's --failures-detailed, per error class.
type Retries struct {
	MaxTries int `json:"max_tries"`
	// Classes are the error classes a request was retried for.
	Classes []string `json:"classes"`
	// RetriedRequests needed more than one try, whatever their outcome.
	RetriedRequests int64 `json:"retried_requests"`
	// TriesPerRequest counts requests by the tries they took ("1", "2", ...).
	TriesPerRequest map[int]int64 `json:"tries_per_request"`
	// RetriesByClass counts retries by the class of the error that caused them
	// ("unknown_outcome": a COMMIT whose outcome was unknown, retried idempotently).
	RetriesByClass map[string]int64 `json:"retries_by_class"`
	// FailedAfterLastTryByClass counts the requests that ran out of tries, by the class of
	// their last error; failures of a class not retried are in error_counts only.
	FailedAfterLastTryByClass map[string]int64 `json:"failed_after_last_try_by_class"`
}

// Latency is a percentile summary in milliseconds, read from a µs-resolution HDR histogram.
type Latency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

// Pool summarises pgxpool.Stat() over the run, sampled by the monitor.
type Pool struct {
	MaxConns             int32 `json:"max_conns"`
	MaxAcquired          int32 `json:"max_acquired"`
	MinIdle              int32 `json:"min_idle"`
	MaxUsageBasisPoints  int64 `json:"max_usage_basis_points"`
	IdleReserve          int32 `json:"idle_reserve"`
	PressureSamples      int64 `json:"pressure_samples"`
	AcquireCount         int64 `json:"acquire_count"`
	EmptyAcquireCount    int64 `json:"empty_acquire_count"`
	CanceledAcquireCount int64 `json:"canceled_acquire_count"`
	// MaxServerSessions is the most sessions of the service (the load's, the flushers', a
	// suite's workers', through a pooler the pooler's) PostgreSQL held at once, from
	// pg_stat_activity at each sample: the monitor's, the engine's and the probes' left out.
	MaxServerSessions int64 `json:"max_server_sessions,omitempty"`
	// SessionSamples sums the service's sessions over the samples, and ClientWaitSamples
	// those of them that waited on the client: idle, or in a transaction waiting for its next
	// statement (wait event Client:*). Their ratio is how much of the time the server's
	// sessions sat waiting for the service (GeneratorLimit). Absent: not recorded.
	SessionSamples    int64 `json:"session_samples,omitempty"`
	ClientWaitSamples int64 `json:"client_wait_samples,omitempty"`
}

// Pooler is a run's pooler between the service and PostgreSQL (PgBouncer), as its admin
// console showed it: SHOW POOLS for the run's database at each monitor sample, SHOW STATS at
// the run's start and end.
type Pooler struct {
	// Kind is "pgbouncer"; Version its version; Managed says the run started it (else
	// --pooler-url).
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	Managed bool   `json:"managed"`
	// Mode is its pool mode (transaction, session) and PoolSize its server connections for
	// the run's database.
	Mode     string `json:"mode"`
	PoolSize int    `json:"pool_size"`
	// Hop says where the run's added round trips were: PoolerRTTMs between the service and the
	// pooler, DBRTTMs between the pooler and PostgreSQL.
	PoolerRTTMs float64 `json:"pooler_rtt_ms,omitempty"`
	DBRTTMs     float64 `json:"db_rtt_ms,omitempty"`
	// Samples and SampleErrors count the console's readings.
	Samples      int64 `json:"samples"`
	SampleErrors int64 `json:"sample_errors,omitempty"`
	// MaxClientsActive and MaxClientsWaiting are the most client connections linked to a
	// server connection, and waiting for one, at once (cl_active, cl_waiting); MaxWaitMs is
	// the longest a waiting client had waited at a sample (maxwait).
	MaxClientsActive  int64   `json:"max_clients_active"`
	MaxClientsWaiting int64   `json:"max_clients_waiting"`
	MaxWaitMs         float64 `json:"max_wait_ms"`
	// WaitingSamples counts the samples with a client waiting.
	WaitingSamples int64 `json:"waiting_samples"`
	// MaxServersActive and MaxServersIdle are the most server connections linked to a client,
	// and idle, at once (sv_active, sv_idle + sv_used).
	MaxServersActive int64 `json:"max_servers_active"`
	MaxServersIdle   int64 `json:"max_servers_idle"`
	// Transactions is the pooled transactions of the run's window (SHOW STATS'
	// total_xact_count), and AvgWaitMs the time clients waited for a server connection per
	// transaction (total_wait_time over them), AvgXactMs a transaction's time on its server
	// connection (total_xact_time over them).
	Transactions int64   `json:"transactions"`
	AvgWaitMs    float64 `json:"avg_wait_ms"`
	AvgXactMs    float64 `json:"avg_xact_ms"`
	// CPUSeconds is the processor time the temporary pooler's process used over the run (user
	// and system, /proc), and CPUShare that over the run's wall time: PgBouncer runs on one
	// thread, so a share near 1 is the pooler's own limit, and on a small machine it takes
	// its processor from the server and the load. Absent for a pooler this run did not start.
	CPUSeconds float64 `json:"cpu_s,omitempty"`
	CPUShare   float64 `json:"cpu_share,omitempty"`
}

// PoolerSample is the pooler at one monitor sample (SHOW POOLS for the run's database).
type PoolerSample struct {
	ClientsActive  int64   `json:"cl_active"`
	ClientsWaiting int64   `json:"cl_waiting"`
	ServersActive  int64   `json:"sv_active"`
	ServersIdle    int64   `json:"sv_idle"`
	MaxWaitMs      float64 `json:"maxwait_ms"`
}

// LockMonitor summarises the lock samples of a run.
type LockMonitor struct {
	Samples       int64 `json:"samples"`
	IntervalMs    int64 `json:"interval_ms"`
	WaiterSamples int64 `json:"waiter_samples"`
	// MaxLockWaiters is the largest number of sessions waiting on a heavyweight lock at once.
	MaxLockWaiters int64 `json:"max_lock_waiters"`
	// MaxWaitersByRelation attributes waiters to the table they queue on (every hot table of
	// the suite is present, 0 when nothing waited on it).
	MaxWaitersByRelation map[string]int64 `json:"max_waiters_by_relation"`
	// MaxWaitersPerRowByRelation is, per table, the most sessions queued at once for any one
	// physical row of it (a slot of a slotted hot row): the waiters for one row version's tuple
	// lock plus the one holding it (see package monitor). Absent in reports from before it.
	MaxWaitersPerRowByRelation map[string]int64 `json:"max_waiters_per_row_by_relation,omitempty"`
	// TotalReadMs is the latency of reading one hot logical row's total (the suite's total
	// query: with slots, a sum over them), timed on the monitor's connection at every sample
	// while the load ran; nil for suites without one and in older reports.
	TotalReadMs *Latency `json:"total_read_ms,omitempty"`
	// TotalReadHistogram is the HDR histogram behind TotalReadMs (µs, V2 compressed, base64;
	// version 8), so that the monitors of a split run's processes merge their timings.
	TotalReadHistogram string `json:"total_read_histogram,omitempty"`
	// MaxWaitersByLockType splits waiters by pg_locks.locktype of the ungranted lock.
	MaxWaitersByLockType map[string]int64 `json:"max_waiters_by_lock_type,omitempty"`
	MaxLockWaitMs        float64          `json:"max_lock_wait_ms"`
	// MaxLockWaitMsByRelation is the longest wait a sample saw per table the waiters were
	// attributed to (absent in reports from before it, and when nothing waited).
	MaxLockWaitMsByRelation map[string]float64 `json:"max_lock_wait_ms_by_relation,omitempty"`
	BlockerSamples          int64              `json:"blocker_samples"`
	MaxBlockedSessions      int64              `json:"max_blocked_sessions"`
	MaxBlockers             int64              `json:"max_blockers"`
	// Blocker is the blocking transaction a sample saw with the most sessions waiting for
	// it (the latest such sample's), where the database names it (InnoDB; absent on
	// PostgreSQL).
	Blocker *Blocker `json:"blocker,omitempty"`
	// MaxServerLockWaits is the most row lock waits of every session of the server a sample
	// saw, the service's and anyone else's (InnoDB's Innodb_row_lock_current_waits; absent on
	// PostgreSQL).
	MaxServerLockWaits int64 `json:"max_server_lock_waits,omitempty"`
	SampleErrors       int64 `json:"sample_errors"`
}

// Blocker is a transaction other sessions of the service wait for, as one sample saw it.
type Blocker struct {
	// Session is the blocking session's id on the server (MySQL's CONNECTION_ID()), and
	// Transaction its transaction's (InnoDB's trx_id).
	Session     int64  `json:"session"`
	Transaction string `json:"transaction"`
	// Waiters is how many of the service's waiting sessions it blocked; Table and Row where
	// the first of them queued.
	Waiters int64  `json:"waiters"`
	Table   string `json:"table,omitempty"`
	Row     string `json:"row,omitempty"`
	// AgeMs is how long its transaction had run; State is InnoDB's trx_state (RUNNING, or
	// LOCK WAIT when it waits itself); Query the statement it was running, empty when it ran
	// none (idle in its transaction: waiting for its client).
	AgeMs float64 `json:"age_ms"`
	State string  `json:"state"`
	Query string  `json:"query,omitempty"`
}

// Flush describes the outbox flush loop of a run.
type Flush struct {
	Calls       int64 `json:"calls"`
	RowsClaimed int64 `json:"rows_claimed"`
	Targets     int64 `json:"targets"`
	Errors      int64 `json:"errors"`
}

// Queue holds the final metrics of an async queue.
type Queue struct {
	Backend    string `json:"backend"`
	Compaction bool   `json:"compaction"`
	FullPolicy string `json:"full_policy"`
	QueueMetrics
	PersistLagMs Latency `json:"persist_lag_ms"`
	// PersistLagHistogram is the HDR histogram behind PersistLagMs (µs, V2 compressed, base64;
	// version 8), so that the consumers of a split run merge their lags exactly.
	PersistLagHistogram string  `json:"persist_lag_histogram,omitempty"`
	Stream              *Stream `json:"stream,omitempty"`
	// FlushTime is where the in-memory queue's flushing time went (absent for the Redis one).
	FlushTime *FlushTime `json:"flush_time,omitempty"`
	// WritesPerUpdate is QueueMetrics.WritesPerUpdate, the queued writes merged into each
	// write sent (version 14; 0: the queue wrote nothing).
	WritesPerUpdate float64 `json:"writes_per_update,omitempty"`
}

// WritesPerUpdate is how many queued writes went into each write the queue's writer sent:
// every source record written (flushed_total + sync_fallback_total) over the records the
// writer was handed for them after compaction (flush_sql_records_total, and each record
// written outside a batch alone). A counter suite's record is one hot row's write, so this is
// the increments merged into each row's UPDATE: 1 without compaction, and as high as a batch
// holds writes of one row with it. 0 when the queue wrote nothing.
func (m QueueMetrics) WritesPerUpdate() float64 {
	return writesPerUpdate(m.FlushedTotal, m.SyncFallbackTotal, m.FlushSQLRecordsTotal)
}

func writesPerUpdate(flushed, fallback, sqlRecords int64) float64 {
	if sqlRecords+fallback <= 0 {
		return 0
	}
	return units.Round(float64(flushed+fallback)/float64(sqlRecords+fallback), 3)
}

// HotSets is how a run's applied requests spread over its --hot-keys sets of hot rows (by
// the config's hot_key_dist): the share of the run's writes its hottest rows took, measured,
// beside the distribution's own.
type HotSets struct {
	// Requests is the applied requests counted: those whose writes must be in the database.
	Requests int64 `json:"requests"`
	// HottestShare is the share of Requests that wrote the set most of them wrote.
	HottestShare float64 `json:"hottest_share"`
	// ExpectedHottestShare is the distribution's share of its hottest set (rank 0): what
	// HottestShare comes to as Requests grows (uniform's i mod hot_keys meets it exactly on
	// every multiple of hot_keys; a random draw within its sampling noise).
	ExpectedHottestShare float64 `json:"expected_hottest_share"`
}

// FlushTime says where a queue's flushing time went (queue.FlushTimes defines each phase), so
// that a queue that keeps the database busy can be told from one that waits on itself.
type FlushTime struct {
	// Batches is the number of committed batches whose phases are counted.
	Batches int64 `json:"batches"`
	// TotalMs sums each phase over every worker; PerBatchMs divides it by Batches.
	TotalMs    FlushPhasesMs `json:"total_ms"`
	PerBatchMs FlushPhasesMs `json:"per_batch_ms"`
	// BatchMs is the distribution of committed batches' flushes, BEGIN to the end of COMMIT.
	BatchMs Latency `json:"batch_ms"`
}

// FlushPhasesMs are a queue's flushing phases in ms: building batches, BEGIN, COPY, the other
// statements (UPDATEs, claims), COMMIT; a pipelined worker waiting for its previous batch's
// COMMIT; failed attempts with their backoffs and one-by-one writes; a partial batch waiting
// for records or its interval; no records at all.
type FlushPhasesMs struct {
	Build        float64 `json:"build"`
	Begin        float64 `json:"begin"`
	Copy         float64 `json:"copy"`
	Statements   float64 `json:"statements"`
	Commit       float64 `json:"commit"`
	PipelineWait float64 `json:"pipeline_wait"`
	Retry        float64 `json:"retry"`
	Wait         float64 `json:"wait"`
	Idle         float64 `json:"idle"`
}

// QueueMetrics are a queue backend's counters, converted from queue.Metrics (package queue
// defines every field and the invariant that ties them together).
type QueueMetrics struct {
	Capacity             int64 `json:"capacity"`
	Depth                int64 `json:"depth"`
	PendingDepth         int64 `json:"pending_depth"`
	MaxDepth             int64 `json:"max_depth"`
	EnqueuedTotal        int64 `json:"enqueued_total"`
	FlushedTotal         int64 `json:"flushed_total"`
	FlushBatchesTotal    int64 `json:"flush_batches_total"`
	FlushSQLOpsTotal     int64 `json:"flush_sql_ops_total"`
	FlushSQLRecordsTotal int64 `json:"flush_sql_records_total"`
	CompactedTotal       int64 `json:"compacted_total"`
	DroppedTotal         int64 `json:"dropped_total"`
	FlushFailedTotal     int64 `json:"flush_failed_total"`
	RetriesTotal         int64 `json:"retries_total"`
	SyncFallbackTotal    int64 `json:"sync_fallback_total"`
	RejectedTotal        int64 `json:"rejected_total"`
	AbandonedTotal       int64 `json:"abandoned_total"`
}

// Stream holds the Redis-streams backend's own counters, converted from redisq.StreamMetrics
// (defined there).
type Stream struct {
	Length                int64 `json:"length"`
	PendingEntries        int64 `json:"pending_entries"`
	AckedTotal            int64 `json:"acked_total"`
	ReclaimedTotal        int64 `json:"reclaimed_total"`
	RedeliveredTotal      int64 `json:"redelivered_total"`
	DeadLetteredTotal     int64 `json:"dead_lettered_total"`
	DuplicateSkippedTotal int64 `json:"duplicate_skipped_total"`
}

// Verification is the suite's exact check of the database after the run. A run is verified
// (Passed) when at least one check was made and every check was made and passed: a check that
// failed fails the run, and a check that could not be made (CheckNotChecked, with its reason)
// leaves it unverified — neither passed nor failed, Unverified naming the checks not made —
// for a run cannot be called verified for content nobody checked (Verdict). The engine's own
// lines — the reconciliation (lost, duplicated, failed found persisted) and, in a process of a
// split run, its part's checks — account for the requests, not for what they wrote: a run whose
// suite made no check of its own is not verified, whatever they say.
type Verification struct {
	Passed bool    `json:"passed"`
	Checks []Check `json:"checks"`
	// Unverified is set when the run could not be verified, or not to the end: a server it
	// needs was unreachable after the load, its drain gave up with writes still held, or a
	// check could not be made. Passed is then false, and what the checks could see is in
	// Checks.
	Unverified *Unverified `json:"unverified,omitempty"`
}

// Verdict is what checks say of a run: CheckPassed when at least one was made and every one
// was made and passed, CheckFailed when one failed, else CheckNotChecked (none failed, but one
// could not be made, or none was made at all).
func Verdict(checks []Check) CheckState {
	verdict := CheckPassed
	if len(checks) == 0 {
		verdict = CheckNotChecked
	}
	for _, c := range checks {
		switch c.State {
		case CheckFailed:
			return CheckFailed
		case CheckNotChecked:
			verdict = CheckNotChecked
		}
	}
	return verdict
}

// NotCheckedReason is Unverified's reason for a run whose checks say CheckNotChecked: the
// checks not made, by name (each check says why), or that none was made.
func NotCheckedReason(checks []Check) string {
	var names []string
	for _, c := range checks {
		if c.State == CheckNotChecked {
			names = append(names, c.Name)
		}
	}
	switch len(names) {
	case 0:
		return "no check was made"
	case 1:
		return "a check was not made: " + names[0]
	}
	return fmt.Sprintf("%d checks were not made: %s", len(names), strings.Join(names, "; "))
}

// Unverified says why a run was not verified and what its load knows of its requests: how
// many succeeded, failed and ended with an unknown outcome (a timed-out or cut-off try), and how
// many accepted writes were not persisted when the run ended (held in the outbox or a stream,
// or abandoned by the in-memory queue).
type Unverified struct {
	Reason    string `json:"reason"`
	Succeeded int64  `json:"succeeded"`
	Failed    int64  `json:"failed"`
	Unknown   int64  `json:"unknown"`
	Held      int64  `json:"held,omitempty"`
}

// Figure is one of a suite's own measurements of a run: what it measured (Name, stable across
// runs so that reports compare), the value and its unit ("jobs/s", "ms", "bytes", "count").
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Label names a run among the others of its report in a suite's own summary lines: its mode,
// its rung on each axis its invocation stepped over, " #<repetition>" when repeated ("sync ×64
// #2", "sync · pool 16").
func (r Run) Label() string {
	label := r.Mode
	for _, a := range Axes {
		if v, ok := r.Rung()[a.Name]; ok {
			if row := a.Row(a.Format(v), r.Config); row != "" {
				label += " " + row
			}
		}
	}
	if r.Repetition > 0 {
		label += fmt.Sprintf(" #%d", r.Repetition)
	}
	return label
}

// Figure returns the run's figure named name and whether it has one.
func (r Run) Figure(name string) (float64, bool) {
	for _, f := range r.Figures {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// Check compares one expected value with the one found (State passed or failed), or says why
// the comparison could not be made (State not_checked, Reason; no Expected or Actual).
// Integers are JSON numbers; NUMERIC values are strings so that no float rounding can hide a
// difference.
type Check struct {
	Name     string     `json:"name"`
	Expected any        `json:"expected,omitempty"`
	Actual   any        `json:"actual,omitempty"`
	State    CheckState `json:"state"`
	Reason   string     `json:"reason,omitempty"`
}

// CheckState is a check's outcome.
type CheckState string

const (
	CheckPassed CheckState = "passed"
	CheckFailed CheckState = "failed"
	// CheckNotChecked is a check that could not be made: the run cannot say the value is
	// right, nor that it is wrong.
	CheckNotChecked CheckState = "not_checked"
)

// Compared is the check named name of expected against actual: passed when ok.
func Compared(name string, expected, actual any, ok bool) Check {
	state := CheckFailed
	if ok {
		state = CheckPassed
	}
	return Check{Name: name, Expected: expected, Actual: actual, State: state}
}

// NotChecked is the check named name, not made, and why.
func NotChecked(name, reason string) Check {
	return Check{Name: name, State: CheckNotChecked, Reason: reason}
}

// Reconciliation accounts for every request layer by layer.
type Reconciliation struct {
	Attempted      int64 `json:"attempted"`
	Acknowledged   int64 `json:"acknowledged"`
	Failed         int64 `json:"failed"`
	OutcomeUnknown int64 `json:"outcome_unknown"`
	// UnknownPersisted and UnknownNotPersisted split OutcomeUnknown after looking it up.
	UnknownPersisted    int64 `json:"unknown_persisted"`
	UnknownNotPersisted int64 `json:"unknown_not_persisted"`
	Persisted           int64 `json:"persisted"`
	Lost                int64 `json:"lost"`
	Duplicated          int64 `json:"duplicated"`
	// FailedButPersisted counts requests reported failed that the database holds anyway.
	FailedButPersisted int64 `json:"failed_but_persisted"`
}

// Leftover is the process's goroutines and open TCP sockets just before a run opened its pool,
// workload, monitor, probes and faults, and after it had closed them all (given up to a second to
// wind down). A run that leaks, a connection a fault left hanging or a goroutine stuck on one,
// shows as After above Before.
type Leftover struct {
	GoroutinesBefore int `json:"goroutines_before"`
	GoroutinesAfter  int `json:"goroutines_after"`
	OpenConnsBefore  int `json:"open_conns_before"`
	OpenConnsAfter   int `json:"open_conns_after"`
}

// Leaked says whether the run left more behind than it found: any TCP socket, or more than
// LeftoverGoroutineSlack goroutines.
func (l *Leftover) Leaked() bool {
	return l != nil && (l.OpenConnsAfter > l.OpenConnsBefore || l.GoroutinesAfter > l.GoroutinesBefore+LeftoverGoroutineSlack)
}

// LeftoverGoroutineSlack is how many goroutines a run may leave beyond what it found without
// counting as a leak: the runtime and the libraries (pgx's pools, go-redis) start and stop a
// few of their own on their own schedule. A TCP connection left open always counts.
const LeftoverGoroutineSlack = 3

// Soak is a long run's drift and recovery: the process's resident memory and goroutines at
// the end of its first minute and at the end of its load, and per fault the recovery time:
// from the fault until the end of the first 1 s window whose throughput is back at 90% of
// the throughput of the minute before the fault (-1: it never was before the load ended).
type Soak struct {
	RSSAtMinuteBytes   int64      `json:"rss_at_minute_bytes"`
	RSSEndBytes        int64      `json:"rss_end_bytes"`
	RSSGrowthPct       float64    `json:"rss_growth_pct"`
	GoroutinesAtMinute int        `json:"goroutines_at_minute"`
	GoroutinesEnd      int        `json:"goroutines_end"`
	GoroutineGrowth    int        `json:"goroutine_growth"`
	MaxOpenConns       int        `json:"max_open_conns"`
	Recoveries         []Recovery `json:"recoveries"`
}

// Recovery is one fault of a soak and the time the throughput took to come back.
type Recovery struct {
	Kind        string  `json:"kind"`
	AtMs        float64 `json:"at_ms"`
	BaselineRPS float64 `json:"baseline_rps"`
	RecoveryMs  float64 `json:"recovery_ms"`
}

// FaultEvent is one injected fault and what it did.
type FaultEvent struct {
	Kind     string  `json:"kind"`
	AtMs     float64 `json:"at_ms"`
	Duration float64 `json:"duration_ms,omitempty"`
	Detail   string  `json:"detail,omitempty"`
	Error    string  `json:"error,omitempty"`
	// Storm is what a conn-storm did (absent for the other kinds).
	Storm *ConnStorm `json:"conn_storm,omitempty"`
}

// ConnStorm is a conn-storm fault: Sessions opened at once through the service's path (as
// the load's pool reaches the server), each running one short statement, then all closed at
// once. Opened is how many opened, Failed how many failed to open or to run their statement
// (FirstError says why); OpenMedianMs and OpenMaxMs are how long the opens that succeeded
// took, TookMs the whole storm, from the first open to the last close.
type ConnStorm struct {
	Sessions     int     `json:"sessions"`
	Opened       int     `json:"opened"`
	Failed       int     `json:"failed,omitempty"`
	OpenMedianMs float64 `json:"open_median_ms"`
	OpenMaxMs    float64 `json:"open_max_ms"`
	TookMs       float64 `json:"took_ms"`
	FirstError   string  `json:"first_error,omitempty"`
}

// Detail is the storm in words, as the summary names it.
func (s *ConnStorm) Detail() string {
	d := fmt.Sprintf("%d of %d sessions opened at once (open median %.1f ms, max %.1f ms), each ran SELECT 1, all closed at once",
		s.Opened, s.Sessions, s.OpenMedianMs, s.OpenMaxMs)
	if s.Failed > 0 {
		d += fmt.Sprintf("; %d failed: %s", s.Failed, s.FirstError)
	}
	return d
}

// Summary is the spread of the key metrics over the repetitions of one mode at one rung.
type Summary struct {
	Mode string `json:"mode"`
	// At is the rung its runs share: their value on each axis their invocation stepped over
	// (absent: none; version 16, before which a summary had a field per axis).
	At          Position          `json:"at,omitempty"`
	Repetitions int               `json:"repetitions"`
	Verified    bool              `json:"verified"`
	Metrics     map[string]Spread `json:"metrics"`
}

// Spread is median, min and max of one metric.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Ladder is one mode's runs over one axis (Axis; --levels, --slots-levels, --rtt-levels,
// --pool-levels, --rates, ...): a level per value the invocation stepped over, in the axis's
// order, and what the axis's rule found in them (a knee, a best size, the highest rate
// within the objective). Every axis has this one shape (version 16; before, each kind of
// ladder had its own list and type, which Read upgrades into it).
type Ladder struct {
	// Axis is the axis's name: the key of the setting it steps (concurrency, slots, db_rtt_ms,
	// max_connections, rate, ...).
	Axis   string  `json:"axis"`
	Mode   string  `json:"mode"`
	Levels []Level `json:"levels"`
	// Rule is the rule that looked for the ladder's answer (knee, stops_paying, best,
	// max_at_slo); absent for an axis without one (the round trip's).
	Rule string `json:"rule,omitempty"`
	// SLOP99Ms is the latency objective a rule that judges by one was given (--slo-p99-ms);
	// absent without one.
	SLOP99Ms float64 `json:"slo_p99_ms,omitempty"`
	// Found is the value of the level the rule named (the knee, the best pool size, the max
	// rate at the objective); absent when it named none.
	Found *Value `json:"found,omitempty"`
	// FoundBy says how the rule chose, when that takes saying: BestBySLO or BestByThroughput.
	FoundBy string `json:"found_by,omitempty"`
}

// Level is one value of a ladder: the medians of its runs' figures over their repetitions.
type Level struct {
	// Value is where the level stands on the ladder's axis (a number in the unit of the axis's
	// setting, or a name).
	Value Value `json:"value"`
	// Figures are the level's medians by name: throughput_rps, p50_ms, p95_ms, p99_ms and the
	// axis's own (a slot ladder's max_waiters_per_row, a pool ladder's acquire_wait_p99_ms, a
	// rate ladder's achieved_rps and sent_share, ...); one its runs did not have is absent
	// (a persist lag without a queue), and so is the throughput of a rate ladder read from
	// before version 16.
	Figures map[string]float64 `json:"figures"`
	// Verified: every run at this level was verified exactly.
	Verified bool `json:"verified"`
	// MetSLO: the level meets the objective as the ladder's rule judges it (p99 within it,
	// and verified for a best size, ≥ 95% of the arrivals sent for a rate).
	MetSLO bool `json:"met_slo,omitempty"`
	// Found marks the level named by the ladder's Found.
	Found bool `json:"found,omitempty"`
}

// AxisOf is the ladder's axis (nil for a name no axis has).
func (l Ladder) AxisOf() *Axis { return AxisNamed(l.Axis) }

// Write encodes the report as indented JSON.
func (r *Report) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteFile writes the report atomically: to a temporary file beside path, then renamed (into
// a device or a pipe, such as /dev/null, directly: see NotAFile).
func (r *Report) WriteFile(path string) error { return WriteFile(path, r.Write) }

// Read decodes one report, checks that it is one, and upgrades it from the version it was
// written in to SchemaVersion.
func Read(rd io.Reader) (*Report, error) {
	var raw json.RawMessage
	if err := json.NewDecoder(rd).Decode(&raw); err != nil {
		return nil, err
	}
	var head struct {
		SchemaVersion int    `json:"schema_version"`
		Suite         string `json:"suite"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	switch {
	case head.SchemaVersion <= 0 || head.Suite == "":
		return nil, fmt.Errorf("not a hotspotkit report (no schema_version or suite)")
	case head.SchemaVersion > SchemaVersion:
		return nil, fmt.Errorf("report schema_version %d is newer than this tool understands (%d)", head.SchemaVersion, SchemaVersion)
	case head.SchemaVersion < SchemaVersion:
		var err error
		if raw, err = upgrade(raw, head.SchemaVersion); err != nil {
			return nil, err
		}
	}
	var r Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReadFile reads one report file; errors name the file.
func ReadFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}
