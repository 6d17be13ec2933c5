package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/recordstest"
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
		QueueFull: "sync", QueueRetries: 5, QueueRetryBackoffMs: 25, Ladder: map[string][]Value{"slots": {Number(1), Number(4)}}, SlotPick: "hash",
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
	found := func(v float64) *Value { return &Value{Num: v} }
	fig := func(rps, p50, p95, p99 float64, more ...any) map[string]float64 {
		m := map[string]float64{MetricThroughputRPS: rps, MetricP50Ms: p50, MetricP95Ms: p95, MetricP99Ms: p99}
		for i := 0; i+1 < len(more); i += 2 {
			m[more[i].(string)] = more[i+1].(float64)
		}
		return m
	}
	want := []Ladder{
		{Axis: "concurrency", Mode: "sync", Rule: "knee", Found: found(16), Levels: []Level{
			{Value: Number(8), Figures: fig(900, 1, 9.5, 12)},
			{Value: Number(16), Figures: fig(1700, 1, 10, 13), Found: true}}},
		{Axis: "slots", Mode: "async-compact", Rule: "stops_paying", Found: found(4), Levels: []Level{
			{Value: Number(1), Figures: fig(100, 1, 2, 3, "max_waiters", 63.0, "max_waiters_per_row", 63.0, "total_read_p50_ms", 0.0,
				"total_read_p99_ms", 0.1, "persist_lag_p99_ms", 90.0)},
			{Value: Number(4), Figures: fig(400, 1, 2, 3, "max_waiters", 0.0, "max_waiters_per_row", 0.0, "total_read_p50_ms", 0.0,
				"total_read_p99_ms", 0.0), Found: true}}},
	}
	if !reflect.DeepEqual(rep.Ladders, want) {
		t.Errorf("ladders\n%+v\nwant\n%+v", rep.Ladders, want)
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

// A version 15 report of each kind of ladder upgrades into the one shape: the committed
// recorded runs of a slot ladder (version 1), a rate ladder (version 1), an RTT ladder
// (version 6) and a pool ladder (version 15), and a concurrency ladder (none is committed: a
// document). Every old ladder becomes one of its axis, level for level, its figures, its
// rule's answer and (but for the pool's, which recorded it) each level's verification from the
// runs; the runs keep their position in their config, so the ladders built again from them are
// the upgraded ones.
func TestReadUpgradesEveryLadder(t *testing.T) {
	for _, c := range []struct {
		file, oldKey, axis, valueKey, foundKey string
	}{
		{"runs/usage_counter_slots_60000x6000.json", "ladders", "slots", "slots", "knee_slots"},
		{"runs/usage_counter_rate_ladder.json", "rate_ladders", "rate", "target_rps", "max_rate_at_slo"},
		{"runs/usage_counter_rtt_ladder.json", "rtt_ladders", "db_rtt_ms", "rtt_ms", ""},
		{"runs/pool/ladder-pgbouncer16.json", "pool_ladders", "max_connections", "pool", "best_pool"},
		{"", "ladders", "concurrency", "concurrency", "knee_concurrency"},
	} {
		raw := []byte(v15ConcurrencyLadder)
		if c.file != "" {
			var err error
			if raw, err = os.ReadFile(recordstest.Path(t, c.file)); err != nil {
				t.Fatal(err)
			}
		}
		old := ladderLists(t, raw, c.oldKey)
		rep, err := Read(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if len(rep.Ladders) != len(old) || len(old) == 0 {
			t.Fatalf("%s: %d ladders, had %d", c.file, len(rep.Ladders), len(old))
		}
		rebuilt := BuildLadders(rep.Runs)
		for i, l := range rep.Ladders {
			o := old[i]
			levels, _ := o["levels"].([]any)
			if o["rates"] != nil {
				levels = o["rates"].([]any)
			}
			if l.Axis != c.axis || l.Mode != o["mode"] || len(l.Levels) != len(levels) {
				t.Errorf("%s ladder %d: %s %s with %d levels, had %v with %d", c.file, i, l.Axis, l.Mode, len(l.Levels), o["mode"], len(levels))
				continue
			}
			if f, _ := o[c.foundKey].(float64); (f > 0) != (l.Found != nil) || (l.Found != nil && l.Found.Num != f) {
				t.Errorf("%s %s: found %v, had %s %v", c.file, l.Mode, l.Found, c.foundKey, o[c.foundKey])
			}
			for j, lv := range l.Levels {
				ol := levels[j].(map[string]any)
				v, _ := ol[c.valueKey].(float64)
				if lv.Value.Num != v || lv.Figures[MetricP99Ms] != ol["p99_ms"] || !lv.Verified {
					t.Errorf("%s %s level %d: %+v, had %v", c.file, l.Mode, j, lv, ol)
				}
			}
			if last := l.Levels[len(l.Levels)-1]; c.axis == "db_rtt_ms" && last.Figures[MetricRTTP50Ms] < last.Value.Num {
				t.Errorf("%s %s: the last rung's measured round trip %v", c.file, l.Mode, last.Figures)
			}
			// Built again from the upgraded runs: the same rungs and answer (a rate ladder's
			// throughput, which its steps did not record, aside).
			if i >= len(rebuilt) || rebuilt[i].Axis != l.Axis || len(rebuilt[i].Levels) != len(l.Levels) || !reflect.DeepEqual(rebuilt[i].Found, l.Found) {
				t.Errorf("%s %s: built again from its runs, the ladder differs: %+v", c.file, l.Mode, rebuilt[min(i, len(rebuilt)-1)])
			}
		}
		for _, r := range rep.Runs {
			if rung := r.Rung(); len(rung) != 1 {
				t.Errorf("%s: run %s stands at %v, want on the %s ladder", c.file, r.Label(), rung, c.axis)
			}
		}
	}
}

// v15ConcurrencyLadder is a version 15 report of a concurrency ladder with repetitions.
const v15ConcurrencyLadder = `{"schema_version": 15, "suite": "s", "runs": [
 {"mode": "sync", "level": 8, "repetition": 1, "config": {"concurrency": 8, "levels": [8, 16]}, "load": {"throughput_rps": 900, "latency_ms": {"p95": 9, "p99": 12}}, "verification": {"passed": true}},
 {"mode": "sync", "level": 16, "repetition": 1, "config": {"concurrency": 16, "levels": [8, 16]}, "load": {"throughput_rps": 910, "latency_ms": {"p95": 20, "p99": 30}}, "verification": {"passed": true}},
 {"mode": "sync", "level": 8, "repetition": 2, "config": {"concurrency": 8, "levels": [8, 16]}, "load": {"throughput_rps": 900, "latency_ms": {"p95": 9, "p99": 12}}, "verification": {"passed": true}},
 {"mode": "sync", "level": 16, "repetition": 2, "config": {"concurrency": 16, "levels": [8, 16]}, "load": {"throughput_rps": 910, "latency_ms": {"p95": 20, "p99": 30}}, "verification": {"passed": true}}],
 "summaries": [{"mode": "sync", "level": 8, "repetitions": 2, "verified": true, "metrics": {}},
  {"mode": "sync", "level": 16, "repetitions": 2, "verified": true, "metrics": {}}],
 "ladders": [{"mode": "sync", "knee_concurrency": 8, "levels": [
  {"concurrency": 8, "throughput_rps": 900, "p50_ms": 1, "p95_ms": 9, "p99_ms": 12, "knee": true},
  {"concurrency": 16, "throughput_rps": 910, "p50_ms": 1, "p95_ms": 20, "p99_ms": 30}]}]}`

// A version 15 summary's rung becomes its at; the runs it summarised stand there.
func TestReadUpgradesSummaries(t *testing.T) {
	rep, err := Read(strings.NewReader(v15ConcurrencyLadder))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range rep.Summaries {
		held := 0
		for _, r := range rep.Runs {
			if s.At.Holds(r) {
				held++
			}
		}
		if want := []float64{8, 16}[i]; s.At.Key() != "concurrency="+fmt.Sprint(want) || held != 2 {
			t.Errorf("summary %d at %v, holding %d runs", i, s.At, held)
		}
	}
	if rep.Runs[1].Level() != 16 || rep.Runs[1].Config.Concurrency != 16 {
		t.Errorf("run 1: level %d, concurrency %d", rep.Runs[1].Level(), rep.Runs[1].Config.Concurrency)
	}
}

// ladderLists is the list under key of a report not yet upgraded, its numbers as float64.
func ladderLists(t *testing.T, raw []byte, key string) []map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range doc[key].([]any) {
		out = append(out, l.(map[string]any))
	}
	return out
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

// A version 18 report ran on PostgreSQL: its environment (and a merged report's processes')
// names the kind, and its postgres_* fields are the database's.
func TestReadUpgradesVersion18DatabaseKind(t *testing.T) {
	const v18 = `{"schema_version": 18, "suite": "s", "runs": [],
	 "environment": {"postgres_version": "15.18", "postgres_settings": {"fsync": "on"}, "managed_postgres": true,
	  "postgres_start_ms": 812.5, "postgres_url": "postgres://u:REDACTED@h/db", "postgres_data_fs": "ext4"},
	 "processes": [{"role": "producer", "report": "p.json", "environment": {"postgres_version": "15.18", "managed_postgres": false}}]}`
	rep, err := Read(strings.NewReader(v18))
	if err != nil {
		t.Fatal(err)
	}
	e := rep.Environment
	if e.DatabaseKind != "postgres" || e.DatabaseVersion != "15.18" || e.DatabaseSettings["fsync"] != "on" || !e.ManagedDatabase ||
		e.DatabaseStartMs != 812.5 || e.DatabaseURL != "postgres://u:REDACTED@h/db" || e.DatabaseDataFS != "ext4" {
		t.Errorf("environment %+v", e)
	}
	if p := rep.Processes[0].Environment; p.DatabaseKind != "postgres" || p.DatabaseVersion != "15.18" || p.ManagedDatabase {
		t.Errorf("a process's environment %+v", p)
	}
}
