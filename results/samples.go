package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// The samples file is NDJSON: one Sample per line, in the order the monitor took them, every
// run of the invocation in one file beside the report (SamplesPath). Its first line may be a
// SamplesHeader, which names the format's version; a file without one was written before the
// header existed (schema version 2 or earlier), and its lines are read as Samples of today.

// SamplesPath is where the NDJSON samples of a report written to output go.
func SamplesPath(output string) string { return output + ".samples.ndjson" }

// SamplesHeader is the first line of a samples file: the version of the format it was written
// in (SchemaVersion) and the suite whose runs it samples. No Sample has a schema_version.
type SamplesHeader struct {
	SchemaVersion int    `json:"schema_version"`
	SamplesOf     string `json:"samples_of"`
}

// WriteSamplesHeader writes the header line of a samples file of suite: the first thing
// written to it.
func WriteSamplesHeader(w io.Writer, suite string) error {
	return json.NewEncoder(w).Encode(SamplesHeader{SchemaVersion: SchemaVersion, SamplesOf: suite})
}

// Sample is one line of the NDJSON samples file: what the monitor saw at one instant.
type Sample struct {
	Time       time.Time `json:"t"`
	Run        int       `json:"run"`
	Mode       string    `json:"mode"`
	Repetition int       `json:"repetition,omitempty"`
	Level      int       `json:"level,omitempty"`
	ElapsedMs  float64   `json:"elapsed_ms"`
	// Lock waiters (absent when the lock query failed in this sample).
	LockWaiters       int64            `json:"lock_waiters"`
	WaitersByRelation map[string]int64 `json:"waiters_by_relation,omitempty"`
	// MaxWaitersPerRow is, per table, the most waiters queued for one physical row of it.
	MaxWaitersPerRow  map[string]int64 `json:"max_waiters_per_row,omitempty"`
	WaitersByLockType map[string]int64 `json:"waiters_by_lock_type,omitempty"`
	OldestLockWaitMs  float64          `json:"oldest_lock_wait_ms"`
	BlockedSessions   *int64           `json:"blocked_sessions,omitempty"`
	Blockers          *int64           `json:"blockers,omitempty"`
	// Blocker is the transaction blocking the most waiters at this instant, where the
	// database names it (InnoDB); ServerLockWaits every session's row lock waits on the server
	// (InnoDB's Innodb_row_lock_current_waits, other databases' sessions too). Both absent on
	// PostgreSQL.
	Blocker           *Blocker `json:"blocker,omitempty"`
	ServerLockWaits   *int64   `json:"server_lock_waits,omitempty"`
	PoolAcquired      int32    `json:"pool_acquired"`
	PoolIdle          int32    `json:"pool_idle"`
	PoolMax           int32    `json:"pool_max"`
	PoolUsageBasisPts int64    `json:"pool_usage_basis_points"`
	PoolPressure      bool     `json:"pool_pressure,omitempty"`
	// ServerSessions is the service's sessions on PostgreSQL at this instant (Pool's
	// MaxServerSessions); Pooler the pooler's state (--pooler).
	ServerSessions int64 `json:"server_sessions,omitempty"`
	// SessionsOnClient is how many of them waited on the client at this instant: idle, or in
	// a transaction waiting for its next statement.
	SessionsOnClient  int64         `json:"sessions_on_client,omitempty"`
	Pooler            *PoolerSample `json:"pooler,omitempty"`
	QueueDepth        *int64        `json:"queue_depth,omitempty"`
	QueuePendingDepth *int64        `json:"queue_pending_depth,omitempty"`
	OutboxPending     *int64        `json:"outbox_pending,omitempty"`
	CompletedRequests int64         `json:"completed_requests"`
	FailedRequests    int64         `json:"failed_requests"`
	// WaitEvents counts the run's backends by "wait_event_type:wait_event" ("active": running,
	// not waiting) at this instant.
	WaitEvents  map[string]int64 `json:"wait_events,omitempty"`
	SampleError string           `json:"error,omitempty"`
	// The process itself at this instant: resident memory, goroutines, open TCP sockets
	// (to PostgreSQL, Redis and the metrics endpoint's clients; counted once a second, at
	// the monitor's slow readings, and the latest count in the samples between).
	RSSBytes   int64 `json:"rss_bytes,omitempty"`
	Goroutines int   `json:"goroutines,omitempty"`
	OpenConns  int   `json:"open_conns,omitempty"`
	// ClientCPUShare is the processor time this process used since the sample before, over
	// the machine's processors and the time between the two (0.5 on 2 processors: one busy).
	ClientCPUShare float64 `json:"client_cpu_share,omitempty"`
}

// ReadSamples reads a samples file, one Sample per line after its header (if it has one);
// blank lines are skipped. A malformed line is an error naming it, except a last line with no
// newline after it: a run that was killed mid-write leaves one, and it is dropped. A file of a
// newer version than SchemaVersion is an error.
func ReadSamples(path string) ([]Sample, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Sample
	lineNo, first := 0, true
	for len(data) > 0 {
		lineNo++
		line, rest, complete := bytes.Cut(data, []byte("\n"))
		data = rest
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if first {
			first = false
			var h SamplesHeader
			if json.Unmarshal(line, &h) == nil && h.SchemaVersion != 0 {
				if h.SchemaVersion > SchemaVersion {
					return nil, fmt.Errorf("%s: samples schema_version %d is newer than this tool understands (%d)", path, h.SchemaVersion, SchemaVersion)
				}
				continue
			}
		}
		var s Sample
		if err := json.Unmarshal(line, &s); err != nil {
			if !complete {
				break
			}
			return nil, fmt.Errorf("%s:%d: %w", path, lineNo, err)
		}
		out = append(out, s)
	}
	return out, nil
}
