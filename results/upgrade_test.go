package results

import (
	"reflect"
	"strings"
	"testing"
)

func TestEveryOlderVersionHasAnUpgrade(t *testing.T) {
	for v := 1; v < SchemaVersion; v++ {
		if upgrades[v] == nil {
			t.Errorf("no upgrade from schema_version %d to %d", v, v+1)
		}
	}
}

// A version 1 report, with the quirks its engines recorded: Go durations, a never-set list
// as its text, --redis-persist as a boolean, the mode in the config, a flag that is gone, the
// suite's own flags among the engine's, and (an engine from before the Redis backend) no
// queue_backend and friends.
const v1Report = `{"schema_version": 1, "suite": "usage_settlement_hotspot_baseline",
 "environment": {"managed_postgres": false},
 "runs": [{"mode": "sync", "config": {
  "requests": 60000, "concurrency": 6000, "duration": "1m30s", "warmup": "0s", "drain-timeout": "5m0s",
  "max-connections": 64, "hot-keys": 1, "monitor-interval-ms": 100, "seed": 1, "modes": ["sync"], "repeat": 3,
  "levels": "", "fault": "[]", "redis-persist": true, "mode": "sync", "progress": true, "output": "x.json",
  "flush-batch-size": 1000, "flush-interval-ms": 100, "queue-capacity": 65536, "queue-workers": 2,
  "queue-full": "sync", "queue-retries": 5, "queue-retry-backoff-ms": 25, "unsafe-no-fsync": false,
  "keep-schema": false, "reuse-schema": false, "pg-bin-dir": "", "pg-user": "", "schema": "",
  "pending-usages": 4, "redeliver-every": 0, "slots-levels": "1,4", "slot-pick": "hash"}}]}`

func TestReadUpgradesVersion1(t *testing.T) {
	rep, err := Read(strings.NewReader(v1Report))
	if err != nil {
		t.Fatal(err)
	}
	want := RunConfig{Requests: 60000, Concurrency: 6000, DurationMs: 90000, DrainTimeoutMs: 300000,
		MaxConnections: 64, HotKeys: 1, MonitorIntervalMs: 100, Seed: 1, Modes: []string{"sync"}, Repeat: 3,
		RedisPersist: "everysec", FlushBatchSize: 1000, FlushIntervalMs: 100, QueueCapacity: 65536, QueueWorkers: 2,
		QueueFull: "sync", QueueRetries: 5, QueueRetryBackoffMs: 25, SlotsLevels: []int{1, 4}, SlotPick: "hash",
		QueueBackend: "memory", Redis: "embedded", ReclaimIdleMs: 10000, MaxDeliveries: 5, Role: "both", ExpectProducers: 1,
		ManagedPostgres: false, Suite: map[string]any{"pending_usages": 4.0, "redeliver_every": 0.0}}
	if rep.SchemaVersion != SchemaVersion || !reflect.DeepEqual(rep.Runs[0].Config, want) {
		t.Errorf("version %d, config\n%+v\nwant\n%+v", rep.SchemaVersion, rep.Runs[0].Config, want)
	}
	for _, bad := range []string{`"duration": "1m30s"`, `"levels": ""`} {
		broken := strings.Replace(v1Report, bad, strings.Replace(bad, `"1m30s"`, `90`, 1)+`, "rates": "a,b"`, 1)
		if _, err := Read(strings.NewReader(broken)); err == nil || !strings.Contains(err.Error(), "upgrading schema_version 1 to 2: run 0: config") {
			t.Errorf("a malformed version 1 config: err = %v", err)
		}
	}
}

func TestReadRejects(t *testing.T) {
	for doc, want := range map[string]string{
		`{"suite": "s", "runs": []}`:                        "not a hotspotkit report",
		`{"schema_version": 2, "runs": []}`:                 "not a hotspotkit report",
		`{"schema_version": 99, "suite": "s", "runs": []}`:  "newer than this tool understands",
		`{"schema_version": "2", "suite": "s", "runs": []}`: "cannot unmarshal",
		`[1, 2]`: "cannot unmarshal",
		`{"schema_version": 2, "suite": "s", "runs": [1, 2]`: "unexpected EOF",
	} {
		if _, err := Read(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%s): err = %v, want %q", doc, err, want)
		}
	}
}

// A version 2 report's ladders: one over concurrency, one over slots (a level of the slot
// ladder carries the concurrency 0 and the knee_concurrency 0 of the shared type).
const v2Ladders = `{"schema_version": 2, "suite": "s", "runs": [], "ladders": [
 {"mode": "sync", "levels": [{"concurrency": 8, "throughput_rps": 900, "p50_ms": 1, "p95_ms": 9.5, "p99_ms": 12},
   {"concurrency": 16, "throughput_rps": 1700, "p50_ms": 1, "p95_ms": 10, "p99_ms": 13, "knee": true}], "knee_concurrency": 16},
 {"mode": "async-compact", "over": "slots", "knee_concurrency": 0, "knee_slots": 4, "levels": [
   {"concurrency": 0, "throughput_rps": 100, "p50_ms": 1, "p95_ms": 2, "p99_ms": 3, "slots": 1, "max_waiters": 63,
    "max_waiters_per_row": 63, "total_read_p99_ms": 0.1, "persist_lag_p99_ms": 90},
   {"concurrency": 0, "throughput_rps": 400, "p50_ms": 1, "p95_ms": 2, "p99_ms": 3, "slots": 4, "knee": true}]}]}`

func TestReadUpgradesVersion2Ladders(t *testing.T) {
	rep, err := Read(strings.NewReader(v2Ladders))
	if err != nil {
		t.Fatal(err)
	}
	conc := []ConcurrencyLadder{{Mode: "sync", KneeConcurrency: 16, Levels: []ConcurrencyLevel{
		{Concurrency: 8, LevelFigures: LevelFigures{ThroughputRPS: 900, P50Ms: 1, P95Ms: 9.5, P99Ms: 12}},
		{Concurrency: 16, LevelFigures: LevelFigures{ThroughputRPS: 1700, P50Ms: 1, P95Ms: 10, P99Ms: 13}, Knee: true}}}}
	slots := []SlotLadder{{Mode: "async-compact", KneeSlots: 4, Levels: []SlotLevel{
		{Slots: 1, LevelFigures: LevelFigures{ThroughputRPS: 100, P50Ms: 1, P95Ms: 2, P99Ms: 3}, MaxWaiters: 63, MaxWaitersPerRow: 63,
			TotalReadP99Ms: 0.1, PersistLagP99Ms: 90},
		{Slots: 4, LevelFigures: LevelFigures{ThroughputRPS: 400, P50Ms: 1, P95Ms: 2, P99Ms: 3}, Knee: true}}}}
	if !reflect.DeepEqual(rep.Ladders, conc) || !reflect.DeepEqual(rep.SlotLadders, slots) {
		t.Errorf("ladders\n%+v\n%+v\nwant\n%+v\n%+v", rep.Ladders, rep.SlotLadders, conc, slots)
	}
	raw, err := upgrade([]byte(v2Ladders), 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range validate(t, readSchema(t, "report.schema.json"), raw) {
		if strings.Contains(e, "ladders") {
			t.Errorf("upgraded version 2 ladders fail the schema: %s", e)
		}
	}
}

// A version 13 report's queues get writes_per_update from their counters: a fallback record
// is written alone, and a queue that wrote nothing, or a report without the counters, gets
// none.
func TestReadUpgradesVersion13WritesPerUpdate(t *testing.T) {
	const v13 = `{"schema_version": 13, "suite": "s", "runs": [
	 {"mode": "async-compact", "config": {"hot_keys": 100}, "queue": {"flushed_total": 9000, "sync_fallback_total": 1000, "flush_sql_records_total": 1000}},
	 {"mode": "async", "config": {}, "queue": {"flushed_total": 500, "sync_fallback_total": 0, "flush_sql_records_total": 500}},
	 {"mode": "async", "config": {}, "queue": {"flushed_total": 0, "sync_fallback_total": 0, "flush_sql_records_total": 0}},
	 {"mode": "async", "config": {}, "queue": {"flushed_total": 10}},
	 {"mode": "sync", "config": {}}]}`
	rep, err := Read(strings.NewReader(v13))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{5, 1, 0, 0} {
		if got := rep.Runs[i].Queue.WritesPerUpdate; got != want {
			t.Errorf("run %d: writes_per_update %v, want %v", i, got, want)
		}
	}
	if rep.Runs[4].Queue != nil || rep.Runs[0].Config.HotKeyDist != "" || rep.Runs[0].HotSets != nil {
		t.Errorf("the upgrade added what was not recorded: %+v", rep.Runs)
	}
}

// A version 15 report's checks get their state from ok; the script suite's placeholders of a
// check not made become not_checked with the reason their name gave, and leave their run —
// recorded as passed — unverified.
func TestReadUpgradesVersion15CheckStates(t *testing.T) {
	const v15 = `{"schema_version": 15, "suite": "script_hotspot_baseline", "runs": [
	 {"mode": "sync", "config": {}, "load": {"completed_requests": 60, "failed_requests": 2},
	  "verification": {"passed": true, "checks": [
	   {"name": "counter_claims rows = applied requests", "expected": 60, "actual": 60, "ok": true},
	   {"name": "what the requests wrote (not recomputable, so not checked: line 3: a CHECK)", "expected": "not checked", "actual": "not checked", "ok": true},
	   {"name": "history: rows appended by INSERTs of different columns (not compared)", "expected": "", "actual": "", "ok": true}]}},
	 {"mode": "sync", "config": {}, "verification": {"passed": false, "checks": [
	   {"name": "hot total", "expected": "1.00000000", "actual": "0.90000000", "ok": false},
	   {"name": "note", "expected": "", "actual": "", "ok": true}]}},
	 {"mode": "sync", "config": {}, "verification": {"passed": true, "checks": [
	   {"name": "note unchanged", "expected": "not checked", "actual": "not checked", "ok": true},
	   {"name": "hot total", "expected": 5, "actual": 5, "ok": true}]}}]}`
	rep, err := Read(strings.NewReader(v15))
	if err != nil {
		t.Fatal(err)
	}
	v := rep.Runs[0].Verification
	want := []Check{
		Compared("counter_claims rows = applied requests", 60.0, 60.0, true),
		NotChecked("what the requests wrote", "not recomputable, so not checked: line 3: a CHECK"),
		NotChecked("history: rows appended by INSERTs of different columns", "not compared"),
	}
	if v.Passed || !reflect.DeepEqual(v.Checks, want) || v.Unverified == nil ||
		*v.Unverified != (Unverified{Reason: "2 checks were not made: what the requests wrote; history: rows appended by INSERTs of different columns", Succeeded: 60, Failed: 2}) {
		t.Errorf("run 0: %+v %+v\nwant checks %+v", v, v.Unverified, want)
	}
	if v := rep.Runs[1].Verification; v.Passed || v.Unverified != nil || v.Checks[0].State != CheckFailed || v.Checks[1] != Compared("note", "", "", true) {
		t.Errorf("run 1 (failed): %+v", v)
	}
	if v := rep.Runs[2].Verification; v.Passed || v.Unverified == nil || v.Unverified.Reason != "a check was not made: note unchanged" ||
		v.Checks[0] != NotChecked("note unchanged", "not made") || v.Checks[1].State != CheckPassed {
		t.Errorf("run 2: %+v", v)
	}
	raw, err := upgrade([]byte(v15), 15)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range validate(t, readSchema(t, "report.schema.json"), raw) {
		if strings.Contains(e, "verification") || strings.Contains(e, "check") {
			t.Errorf("upgraded version 15 checks fail the schema: %s", e)
		}
	}
}
