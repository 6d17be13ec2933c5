package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// upgrades[v] turns a report of schema version v into one of version v+1. Each step works on
// the decoded JSON document (numbers kept as json.Number), not on the Go types, so that it
// knows only the two versions it joins and later changes to the types cannot change what an
// old step does. Read runs them in turn from a report's version to SchemaVersion; nothing else
// in this module (or in any reader of Report) copes with an older report.
var upgrades = [SchemaVersion]func(doc map[string]any) error{
	1:  upgradeV1,
	2:  upgradeV2,
	3:  upgradeV3,
	4:  upgradeV4,
	5:  upgradeV5,
	6:  upgradeV6,
	7:  upgradeV7,
	8:  upgradeV8,
	9:  upgradeV9,
	10: upgradeV10,
	11: upgradeV11,
	12: upgradeV12,
	13: upgradeV13,
	14: upgradeV14,
	15: upgradeCheckStates,
	16: upgradeLadders,
	17: upgradeV17,
	18: upgradeDatabaseKind,
	19: upgradeV19,
	20: upgradeV20,
}

// upgradeV20 is version 20 → 21: version 21 added a headroom step's full and length_ms, and a
// kind ladder's databases' url and schema. A step of an older ramp ran at the full length: it is
// marked full, so that its held steps still make the knee as they did.
func upgradeV20(doc map[string]any) error {
	advice, _ := doc["advice"].(map[string]any)
	head, _ := advice["headroom"].(map[string]any)
	steps, _ := head["steps"].([]any)
	for _, st := range steps {
		if step, ok := st.(map[string]any); ok {
			step["full"] = true
		}
	}
	return nil
}

// upgradeV19 is version 19 → 20: version 20 only added the environment's databases of a
// ladder over the database's kind, absent in any other report. Nothing to convert.
func upgradeV19(map[string]any) error { return nil }

// upgradeDatabaseKind is version 18 → 19: the environment names the database's kind, and its
// PostgreSQL fields become the database's (postgres_version → database_version, ...). Every
// report before it ran on PostgreSQL: database_kind postgres. A merged report's processes'
// environments are converted too.
func upgradeDatabaseKind(doc map[string]any) error {
	envs := []any{doc["environment"]}
	procs, _ := doc["processes"].([]any)
	for _, p := range procs {
		if proc, ok := p.(map[string]any); ok {
			envs = append(envs, proc["environment"])
		}
	}
	for _, e := range envs {
		env, ok := e.(map[string]any)
		if !ok {
			continue
		}
		for _, name := range []string{"version", "settings", "start_ms", "url", "data_fs"} {
			if v, ok := env["postgres_"+name]; ok {
				env["database_"+name] = v
				delete(env, "postgres_"+name)
			}
		}
		if v, ok := env["managed_postgres"]; ok {
			env["managed_database"] = v
			delete(env, "managed_postgres")
		}
		env["database_kind"] = "postgres"
	}
	return nil
}

// upgradeV17 is version 17 → 18: version 18 only added the advice of --advise, absent in a
// report that did not search. Nothing to convert.
func upgradeV17(map[string]any) error { return nil }

// upgradeV3 is version 3 → 4: version 4 only added fields (the network's and rtt_ladders),
// whose absence means a run over the direct path that measured no round trip. Nothing to
// convert.
func upgradeV3(map[string]any) error { return nil }

// upgradeV4 is version 4 → 5: version 5 only added a run's leftover, whose absence means it
// was not measured. Nothing to convert.
func upgradeV4(map[string]any) error { return nil }

// upgradeV5 is version 5 → 6: version 6 only added a run's request_time, whose absence means
// it was not measured. Nothing to convert.
func upgradeV5(map[string]any) error { return nil }

// upgradeV6 is version 6 → 7: version 7 only added a run's figures, whose absence means the
// suite had none. Nothing to convert.
func upgradeV6(map[string]any) error { return nil }

// upgradeV7 is version 7 → 8: version 8 only added the histograms behind the persist lag,
// the pool wait and the total reads, a load's measured_from, the environment's pid and a merged report's
// processes, whose absence means they were not recorded (and the report is one process's).
// Nothing to convert.
func upgradeV7(map[string]any) error { return nil }

// upgradeV8 is version 8 → 9: version 9 only added the environment's redis_topology and the
// config's redis_replicas and stream_shards, whose absence means one server and one stream.
// Nothing to convert.
func upgradeV8(map[string]any) error { return nil }

// upgradeV9 is version 9 → 10: version 10 only added the histograms behind the network
// probes' round trips, whose absence means they were not recorded. Nothing to convert.
func upgradeV9(map[string]any) error { return nil }

// upgradeV10 is version 10 → 11: version 11 added database.sessions and left the sessions'
// startup transactions out of database.xact_commit. An older report's count cannot be
// corrected (it did not record its sessions): it stays as it was, a few commits high.
func upgradeV10(map[string]any) error { return nil }

// upgradeV11 is version 11 → 12: version 12 added database.autovacuums, whose absence means
// it was not recorded. Nothing to convert.
func upgradeV11(map[string]any) error { return nil }

// upgradeV12 is version 12 → 13: version 13 added environment.postgres_data_fs, whose
// absence means it was not recorded. Nothing to convert.
func upgradeV12(map[string]any) error { return nil }

// upgradeV13 is version 13 → 14: version 14 added the config's hot_key_dist, whose absence
// means uniform, a run's hot_sets, whose absence means not recorded, and a queue's
// writes_per_update, which a queue's counters give: it is worked out here where the report
// has them (an early one may lack a counter; it is then left absent, not recorded).
func upgradeV13(doc map[string]any) error {
	runs, _ := doc["runs"].([]any)
	for _, r := range runs {
		run, _ := r.(map[string]any)
		q, ok := run["queue"].(map[string]any)
		if !ok {
			continue
		}
		var counts [3]int64
		recorded := true
		for k, key := range []string{"flushed_total", "sync_fallback_total", "flush_sql_records_total"} {
			n, ok := q[key].(json.Number)
			v, err := n.Int64()
			recorded = recorded && ok && err == nil
			counts[k] = v
		}
		if v := writesPerUpdate(counts[0], counts[1], counts[2]); recorded && v > 0 {
			q["writes_per_update"] = v
		}
	}
	return nil
}

// upgradeV14 is version 14 → 15: version 15 only added the pool ladder (pool_ladders, a run's
// and a summary's pool_size, the config's pool_levels), whose absence means none was run.
// Nothing to convert.
func upgradeV14(map[string]any) error { return nil }

// upgradeCheckStates is version 15 → 16: a check's ok becomes its state, passed or failed,
// except a placeholder of a check not made — an expected and actual both "not checked", or
// both "" under a name ending "(not compared)" (the script suite's) — which becomes
// not_checked, its reason the name's last parenthesis ("not compared", "not recomputable, so
// not checked: …"), and leaves a run recorded as passed unverified: not passed, its
// unverified naming the checks not made, with what its load counted of its requests.
func upgradeCheckStates(doc map[string]any) error {
	runs, _ := doc["runs"].([]any)
	for _, r := range runs {
		run, _ := r.(map[string]any)
		v, ok := run["verification"].(map[string]any)
		if !ok {
			continue
		}
		checks, _ := v["checks"].([]any)
		var notMade []string
		for _, c := range checks {
			check, ok := c.(map[string]any)
			if !ok {
				continue
			}
			state := "failed"
			if passed, _ := check["ok"].(bool); passed {
				state = "passed"
			}
			delete(check, "ok")
			check["state"] = state
			name, _ := check["name"].(string)
			expected, _ := check["expected"].(string)
			actual, isText := check["actual"].(string)
			placeholder := expected == "not checked" || expected == "" && strings.HasSuffix(name, " (not compared)")
			if !isText || expected != actual || !placeholder {
				continue
			}
			delete(check, "expected")
			delete(check, "actual")
			reason := "not made"
			if open := strings.LastIndex(name, " ("); open >= 0 && strings.HasSuffix(name, ")") {
				name, reason = name[:open], name[open+2:len(name)-1]
			}
			check["name"], check["state"], check["reason"] = name, "not_checked", reason
			notMade = append(notMade, name)
		}
		if passed, _ := v["passed"].(bool); !passed || len(notMade) == 0 {
			continue
		}
		v["passed"] = false
		if _, ok := v["unverified"]; ok {
			continue
		}
		why := "a check was not made: " + notMade[0]
		if len(notMade) > 1 {
			why = fmt.Sprintf("%d checks were not made: %s", len(notMade), strings.Join(notMade, "; "))
		}
		u := map[string]any{"reason": why, "succeeded": json.Number("0"), "failed": json.Number("0"), "unknown": json.Number("0")}
		if load, ok := run["load"].(map[string]any); ok {
			for key, from := range map[string]string{"succeeded": "completed_requests", "failed": "failed_requests"} {
				if n, ok := load[from].(json.Number); ok {
					u[key] = n
				}
			}
		}
		v["unverified"] = u
	}
	return nil
}

// fiveLadderKinds are the five kinds of ladder before upgradeLadders and what each became: the
// axis, the run's field that held its value (and the summary's), the config's list of the
// invocation's values, the report's list of ladders, a level's field of its value, the
// ladder's field of what its rule found and the rule. Frozen: this is what those versions were.
var fiveLadderKinds = []struct {
	axis, runKey, configKey, reportKey, levelsKey, valueKey, foundKey, rule string
}{
	{"concurrency", "level", "levels", "ladders", "levels", "concurrency", "knee_concurrency", "knee"},
	{"slots", "slots", "slots_levels", "slot_ladders", "levels", "slots", "knee_slots", "stops_paying"},
	{"db_rtt_ms", "rtt_ms", "rtt_levels_ms", "rtt_ladders", "levels", "rtt_ms", "", ""},
	{"max_connections", "pool_size", "pool_levels", "pool_ladders", "levels", "pool", "best_pool", "best"},
	{"rate", "rate", "rates", "rate_ladders", "rates", "target_rps", "max_rate_at_slo", "max_at_slo"},
}

// upgradeLadders is version 16 → 17: the five kinds of ladder become one (ladders: axis, mode,
// levels of a value and figures, what the rule found), a run's position lives in its config
// alone, and a summary names its rung in at. Per run, the config's ladder lists (levels,
// rates, slots_levels, rtt_levels_ms, pool_levels) become its ladder, by axis, and the run's
// level, rate, slots, rtt_ms and pool_size go, their values kept in the config's setting of
// the axis (which held the same). Per summary, the fields of the axes the runs stepped over
// become at. Per ladder level, the value's field becomes value, knee, best and max_at_slo
// found, and every other number a figure; a level that did not record whether its runs were
// verified (all but a pool ladder's) is given that from its runs, and an RTT ladder's level the
// median round trip its runs' probes measured to PostgreSQL (rtt_p50_ms), which the summary
// used to read from the runs.
func upgradeLadders(doc map[string]any) error {
	runs, _ := doc["runs"].([]any)
	stepped := map[string]bool{}
	for i, r := range runs {
		run, ok := r.(map[string]any)
		if !ok {
			return fmt.Errorf("run %d is not an object", i)
		}
		cfg, _ := run["config"].(map[string]any)
		if cfg == nil {
			cfg = map[string]any{}
			run["config"] = cfg
		}
		ladder := map[string]any{}
		for _, ax := range fiveLadderKinds {
			if list, ok := cfg[ax.configKey].([]any); ok && len(list) > 0 {
				ladder[ax.axis] = list
				stepped[ax.axis] = true
			}
			delete(cfg, ax.configKey)
		}
		if len(ladder) > 0 {
			cfg["ladder"] = ladder
		}
	}
	// A level or pool size was recorded only on its ladder: a run that has one stood on it,
	// whatever its config's list says.
	for _, ax := range fiveLadderKinds {
		if ax.axis != "concurrency" && ax.axis != "max_connections" {
			continue
		}
		var values []any
		for _, r := range runs {
			if v, ok := docNumber(r.(map[string]any)[ax.runKey]); ok && v > 0 && !slices.ContainsFunc(values, func(x any) bool { n, _ := docNumber(x); return n == v }) {
				values = append(values, r.(map[string]any)[ax.runKey])
			}
		}
		for _, r := range runs {
			cfg := r.(map[string]any)["config"].(map[string]any)
			ladder, _ := cfg["ladder"].(map[string]any)
			if len(values) > 0 && ladder[ax.axis] == nil {
				if ladder == nil {
					ladder = map[string]any{}
					cfg["ladder"] = ladder
				}
				ladder[ax.axis], stepped[ax.axis] = values, true
			}
		}
	}
	if ladders, err := oneLadderShape(doc, runs); err != nil {
		return err
	} else if len(ladders) > 0 {
		doc["ladders"] = ladders
	}
	sums, _ := doc["summaries"].([]any)
	for _, s := range sums {
		sum, ok := s.(map[string]any)
		if !ok {
			continue
		}
		at := map[string]any{}
		for _, ax := range fiveLadderKinds {
			if v, ok := sum[ax.runKey]; ok && stepped[ax.axis] {
				at[ax.axis] = v
			} else if stepped[ax.axis] {
				at[ax.axis] = json.Number("0")
			}
			delete(sum, ax.runKey)
		}
		if len(at) > 0 {
			sum["at"] = at
		}
	}
	for _, r := range runs {
		run := r.(map[string]any)
		cfg := run["config"].(map[string]any)
		for _, ax := range fiveLadderKinds {
			if v, ok := docNumber(run[ax.runKey]); ok && v != 0 && !(ax.axis == "slots" && v <= 1) {
				cfg[ax.axis] = run[ax.runKey]
			}
			delete(run, ax.runKey)
		}
	}
	return nil
}

// oneLadderShape is the report's ladders of the five kinds in the one shape, in the order of
// the axes; the old lists are removed from doc. runs are the report's runs, their old fields
// still in place.
func oneLadderShape(doc map[string]any, runs []any) ([]any, error) {
	var out []any
	for _, ax := range fiveLadderKinds {
		list, _ := doc[ax.reportKey].([]any)
		delete(doc, ax.reportKey)
		for _, l := range list {
			old, ok := l.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: %v is not an object", ax.reportKey, l)
			}
			mode, _ := old["mode"].(string)
			ladder := map[string]any{"axis": ax.axis, "mode": mode}
			if ax.rule != "" {
				ladder["rule"] = ax.rule
			}
			if slo, ok := docNumber(old["slo_p99_ms"]); ok && slo > 0 {
				ladder["slo_p99_ms"] = old["slo_p99_ms"]
			}
			if found, ok := docNumber(old[ax.foundKey]); ok && found > 0 {
				ladder["found"] = old[ax.foundKey]
			}
			if by, ok := old["best_by"].(string); ok {
				ladder["found_by"] = by
			}
			levels := []any{}
			olds, _ := old[ax.levelsKey].([]any)
			for _, lv := range olds {
				level, ok := lv.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s %s: level %v is not an object", ax.reportKey, mode, lv)
				}
				levels = append(levels, oneLadderLevel(ax.axis, ax.runKey, ax.valueKey, mode, level, runs))
			}
			ladder["levels"] = levels
			out = append(out, ladder)
		}
	}
	return out, nil
}

// oneLadderLevel is one level of a ladder of the five kinds in the one shape.
func oneLadderLevel(axis, runKey, valueKey, mode string, old map[string]any, runs []any) map[string]any {
	value := old[valueKey]
	if value == nil {
		value = json.Number("0") // an RTT ladder's loopback rung, 0 left out
	}
	want, _ := docNumber(value)
	var at []map[string]any // the runs of the level
	for _, r := range runs {
		run := r.(map[string]any)
		v, _ := docNumber(run[runKey])
		level, _ := docNumber(run["level"])
		if run["mode"] == mode && v == want && (axis != "rate" || level == 0) {
			at = append(at, run)
		}
	}
	lv := map[string]any{"value": value}
	figures := map[string]any{}
	for k, v := range old {
		switch k {
		case valueKey:
		case "knee", "best", "max_at_slo":
			if v == true {
				lv["found"] = true
			}
		case "verified", "met_slo":
			lv[k] = v
		default:
			figures[k] = v
		}
	}
	if _, ok := lv["verified"]; !ok {
		verified := len(at) > 0
		for _, run := range at {
			ver, _ := run["verification"].(map[string]any)
			verified = verified && ver["passed"] == true
		}
		lv["verified"] = verified
	}
	if axis == "db_rtt_ms" {
		var p50s []float64
		for _, run := range at {
			pg, _ := docObject(run, "network", "postgres")
			probes, _ := docNumber(pg["probes"])
			rtt, _ := pg["rtt_ms"].(map[string]any)
			if p50, ok := docNumber(rtt["p50"]); ok && probes > 0 {
				p50s = append(p50s, p50)
			}
		}
		if len(p50s) > 0 {
			slices.Sort(p50s)
			figures["rtt_p50_ms"] = p50s[len(p50s)/2]
		}
	}
	lv["figures"] = figures
	return lv
}

// docObject is the object at the path of keys under m.
func docObject(m map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

// docNumber reads a number of the document (absent or not a number: false).
func docNumber(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// upgrade returns the report doc of version from as a document of SchemaVersion.
func upgrade(raw []byte, from int) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	for v := from; v < SchemaVersion; v++ {
		if err := upgrades[v](doc); err != nil {
			return nil, fmt.Errorf("upgrading schema_version %d to %d: %w", v, v+1, err)
		}
	}
	doc["schema_version"] = SchemaVersion
	return json.Marshal(doc)
}

// upgradeV1 is version 1 → 2: each run's config, a map of flag names, becomes a RunConfig
// (configV1); the config's "mode" goes (Run.Mode says it).
func upgradeV1(doc map[string]any) error {
	runs, _ := doc["runs"].([]any)
	managed := true // the founding engines always started their own server
	if env, ok := doc["environment"].(map[string]any); ok {
		if m, ok := env["managed_postgres"].(bool); ok {
			managed = m
		}
	}
	for i, r := range runs {
		run, ok := r.(map[string]any)
		if !ok {
			continue
		}
		cfg, ok := run["config"].(map[string]any)
		if !ok {
			continue
		}
		if _, ok := cfg["managed_postgres"]; !ok {
			cfg["managed_postgres"] = managed
		}
		out, err := configV1(cfg)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		run["config"] = out
	}
	return nil
}

// upgradeV2 is version 2 → 3: the ladders that stepped over slots ("over": "slots") move to
// slot_ladders; each kind of ladder keeps only its own fields.
func upgradeV2(doc map[string]any) error {
	ladders, _ := doc["ladders"].([]any)
	var concurrency, slots []any
	for _, l := range ladders {
		ladder, ok := l.(map[string]any)
		if !ok {
			return fmt.Errorf("ladder %v is not an object", l)
		}
		over := ladder["over"]
		delete(ladder, "over")
		levels, _ := ladder["levels"].([]any)
		if over == "slots" {
			delete(ladder, "knee_concurrency")
			setAbsent(ladder, "knee_slots", 0)
			for _, lv := range levels {
				if level, ok := lv.(map[string]any); ok {
					delete(level, "concurrency")
					for _, k := range []string{"slots", "max_waiters", "max_waiters_per_row", "total_read_p50_ms", "total_read_p99_ms"} {
						setAbsent(level, k, 0)
					}
				}
			}
			slots = append(slots, ladder)
			continue
		}
		delete(ladder, "knee_slots")
		for _, lv := range levels {
			if level, ok := lv.(map[string]any); ok {
				for _, k := range []string{"slots", "max_waiters", "max_waiters_per_row", "total_read_p50_ms", "total_read_p99_ms", "persist_lag_p99_ms"} {
					delete(level, k)
				}
			}
		}
		concurrency = append(concurrency, ladder)
	}
	delete(doc, "ladders")
	if len(concurrency) > 0 {
		doc["ladders"] = concurrency
	}
	if len(slots) > 0 {
		doc["slot_ladders"] = slots
	}
	return nil
}

func setAbsent(m map[string]any, key string, v any) {
	if _, ok := m[key]; !ok {
		m[key] = v
	}
}

// v1Key is what became of one key of a version 1 config: its key in version 2, how its value
// converts, and the value an engine that did not record it yet ran as (nil: the off value).
type v1Key struct {
	key     string
	convert func(any) (v any, keep bool, err error)
	absent  any
}

// v1Keys are every key the engines of version 1 recorded that is not a suite's own flag
// (those go to config.suite). Frozen: this is what version 1 was, whatever RunConfig becomes.
// A key every version 1 engine recorded is given its zero value when absent, so that the
// upgraded document is complete.
var v1Keys = map[string]v1Key{
	"requests": {key: "requests", absent: 0}, "concurrency": {key: "concurrency", absent: 0},
	"duration": {key: "duration_ms", convert: v1Duration, absent: 0}, "warmup": {key: "warmup_ms", convert: v1Duration, absent: 0},
	"max-connections": {key: "max_connections", absent: 0}, "hot-keys": {key: "hot_keys", absent: 0},
	"monitor-interval-ms": {key: "monitor_interval_ms", absent: 0}, "seed": {key: "seed", absent: 0},
	"modes": {key: "modes", convert: v1List(false), absent: []any{}}, "repeat": {key: "repeat", absent: 0},
	"levels": {key: "levels", convert: v1List(true)},

	"max-tries": {key: "max_tries"}, "retry-backoff-ms": {key: "retry_backoff_ms"},
	"retry-classes": {key: "retry_classes", convert: v1List(false)}, "debug-lose-commit-every": {key: "debug_lose_commit_every"},
	// Never in a version 1 report: a flag the engine added while it still recorded this form.
	"debug-slow-flush-pct": {key: "debug_slow_flush_pct"},

	"rate": {key: "rate"}, "arrivals": {key: "arrivals"},
	"ramp": {key: "ramp_ms", convert: v1Duration}, "max-lag": {key: "max_lag_ms", convert: v1Duration},
	"rates": {key: "rates", convert: v1List(true)}, "slo-p99-ms": {key: "slo_p99_ms"},

	"slots": {key: "slots"}, "slot-pick": {key: "slot_pick"}, "slots-levels": {key: "slots_levels", convert: v1List(true)},

	"flush-batch-size": {key: "flush_batch_size", absent: 0}, "flush-interval-ms": {key: "flush_interval_ms", absent: 0},
	"queue-capacity": {key: "queue_capacity", absent: 0}, "queue-workers": {key: "queue_workers", absent: 0},
	"queue-full": {key: "queue_full", absent: ""}, "queue-retries": {key: "queue_retries", absent: 0},
	"queue-retry-backoff-ms": {key: "queue_retry_backoff_ms", absent: 0},
	"drain-timeout":          {key: "drain_timeout_ms", convert: v1Duration, absent: 0},
	// The Redis backend's flags came after the first engines, which ran as their defaults.
	"queue-backend": {key: "queue_backend", absent: "memory"}, "redis": {key: "redis", absent: "embedded"},
	"redis-url": {key: "redis_url"}, "redis-persist": {key: "redis_persist", convert: v1Persist},
	"reclaim-idle-ms": {key: "reclaim_idle_ms", absent: 10000}, "max-deliveries": {key: "max_deliveries", absent: 5},
	"role": {key: "role", absent: "both"}, "producer-id": {key: "producer_id", absent: 0},
	"verify": {key: "verify", absent: false}, "expect-producers": {key: "expect_producers", absent: 1},

	"fault": {key: "faults", convert: v1List(false)}, "fault-every": {key: "fault_every_ms", convert: v1Duration},

	"managed_postgres": {key: "managed_postgres"}, // set from the environment when absent (upgradeV1)
	"unsafe-no-fsync":  {key: "unsafe_no_fsync", absent: false},
	"postgres-url":     {key: "postgres_url"}, "pg-bin-dir": {key: "pg_bin_dir"}, "pg-user": {key: "pg_user"},
	"pg-download-cache": {key: "pg_download_cache"}, "pg-download-url": {key: "pg_download_url"},
	"pg-download-version": {key: "pg_download_version"},
	"schema":              {key: "schema"}, "keep-schema": {key: "keep_schema", absent: false},
	"reuse-schema": {key: "reuse_schema", absent: false},

	// Recorded by some engines, shaping nothing, gone from version 2.
	"mode": {}, "output": {}, "cpu-profile": {}, "mem-profile": {}, "progress": {}, "help": {},
	"debug-break-expectations": {}, "calibrate": {}, "metrics-addr": {}, "metrics-linger": {},
}

// configV1 converts a version 1 config (flag names → values) to a version 2 one.
func configV1(cfg map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(cfg))
	suite := make(map[string]any)
	for name, v := range cfg {
		k, ok := v1Keys[name]
		switch {
		case !ok:
			suite[suiteKey(name)] = v
			continue
		case k.key == "":
			continue
		case k.convert != nil:
			var keep bool
			var err error
			if v, keep, err = k.convert(v); err != nil {
				return nil, fmt.Errorf("config %s: %w", name, err)
			} else if !keep {
				continue
			}
		}
		out[k.key] = v
	}
	for _, k := range v1Keys {
		if _, ok := out[k.key]; !ok && k.absent != nil {
			out[k.key] = k.absent
		}
	}
	if len(suite) > 0 {
		out["suite"] = suite
	}
	return out, nil
}

// v1Duration converts a Go duration ("30s") to milliseconds.
func v1Duration(v any) (any, bool, error) {
	s, ok := v.(string)
	if !ok {
		return nil, false, fmt.Errorf("%v is not a duration", v)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return nil, false, err
	}
	return Milliseconds(d), true, nil
}

// v1List keeps a list; a flag that was never set was recorded as its text ("" or "[]"), and
// some engines recorded a set one that way too ("[a,b]", "1,2,4").
func v1List(numbers bool) func(any) (any, bool, error) {
	return func(v any) (any, bool, error) {
		s, ok := v.(string)
		if !ok {
			return v, true, nil
		}
		var out []any
		for _, item := range strings.Split(strings.Trim(s, "[]"), ",") {
			item = strings.TrimSpace(item)
			switch {
			case item == "":
			case !numbers:
				out = append(out, item)
			default:
				if _, err := strconv.ParseFloat(item, 64); err != nil {
					return nil, false, fmt.Errorf("%q is not a list of numbers", s)
				}
				out = append(out, json.Number(item))
			}
		}
		return out, len(out) > 0, nil
	}
}

// v1Persist converts --redis-persist, a boolean in the engines before it took off, everysec
// or always; off is left out.
func v1Persist(v any) (any, bool, error) {
	switch p := v.(type) {
	case bool:
		return "everysec", p, nil
	case string:
		return p, p != "" && p != "off", nil
	}
	return nil, false, fmt.Errorf("%v is not a persistence setting", v)
}
