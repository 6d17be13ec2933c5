package results_test

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
)

func TestSettingsSayWhetherTheyShape(t *testing.T) {
	keys, flags := map[string]bool{}, map[string]bool{}
	for _, s := range results.Settings() {
		if keys[s.Key] || (s.Flag != "" && flags[s.Flag]) {
			t.Errorf("setting %s (--%s) listed twice", s.Key, s.Flag)
		}
		keys[s.Key], flags[s.Flag] = true, true
	}
	shapes := func(key string) bool {
		s, ok := results.LookupSetting(key)
		if !ok {
			t.Fatalf("no setting %s", key)
		}
		return s.Shapes
	}
	for _, k := range []string{"seed", "postgres_url", "redis_url", "pg_bin_dir", "pg_dir", "pg_user", "pg_download_cache",
		"pg_download_url", "pg_download_version", "schema", "keep_schema", "reuse_schema", "repeat", "ladder", "modes",
		"slo_p99_ms", "request_timeout_ms", "reconcile_timeout_ms", "shutdown_timeout_ms",
		"pooler_url", "mysql_url", "mariadb_bin_dir"} {
		if shapes(k) {
			t.Errorf("%s should not take part in matching", k)
		}
	}
	for _, k := range []string{"requests", "concurrency", "duration_ms", "warmup_ms", "max_connections", "flush_batch_size",
		"flush_interval_ms", "monitor_interval_ms", "hot_keys", "unsafe_no_fsync", "queue_capacity", "queue_workers",
		"queue_full", "queue_retries", "drain_timeout_ms", "managed_postgres", "queue_backend", "redis", "faults",
		"max_tries", "rate", "slots", "slot_pick", "fault_every_ms", "db_rtt_ms", "db_rtt_jitter_ms", "redis_rtt_ms",
		"pooler", "pooler_mode", "pooler_pool_size", "pooler_rtt_ms", "database", "innodb_deadlock_detect",
		"innodb_lock_wait_timeout_ms", "innodb_flush_log_at_trx_commit"} {
		if !shapes(k) {
			t.Errorf("%s shapes a run and must take part in matching", k)
		}
	}
	if got := results.NonShapingKeys(); !slices.IsSorted(got) || len(got) != 22 {
		t.Errorf("non-shaping keys %q", got)
	}
}

func TestLookupSetting(t *testing.T) {
	for name, want := range map[string]string{"duration": "duration_ms", "duration_ms": "duration_ms", "fault": "faults",
		"faults": "faults", "flush-batch-size": "flush_batch_size", "max-lag": "max_lag_ms", "managed_postgres": "managed_postgres"} {
		if s, ok := results.LookupSetting(name); !ok || s.Key != want {
			t.Errorf("LookupSetting(%q) = %+v %v, want key %s", name, s, ok, want)
		}
	}
	if s, _ := results.LookupSetting("managed_postgres"); s.Flag != "" {
		t.Errorf("managed_postgres has flag %q; no flag sets it", s.Flag)
	}
	for _, name := range []string{"persistence", "mode", "output", "managed-postgres"} {
		if _, ok := results.LookupSetting(name); ok {
			t.Errorf("LookupSetting(%q) found a setting", name)
		}
	}
	if got := results.SettingKey("pending-usages"); got != "pending_usages" || results.SuiteFlag(got) != "pending-usages" {
		t.Errorf("a suite flag's key %q", got)
	}
}

func TestShapingLeavesOutWhatHasNoEffect(t *testing.T) {
	base := results.RunConfig{Requests: 1000, Concurrency: 10, FlushBatchSize: 1000, Suite: map[string]any{"pool_size": 32}}
	same := []func(*results.RunConfig){
		func(c *results.RunConfig) { c.MaxTries, c.RetryBackoffMs, c.RetryClasses = 1, 20, []string{"40001"} },
		func(c *results.RunConfig) { c.Slots, c.SlotPick = 1, "session" },
		func(c *results.RunConfig) { c.Arrivals, c.RampMs, c.SLOP99Ms = "uniform", 500, 200 },
		func(c *results.RunConfig) { c.RedisPersist = "off" },
		func(c *results.RunConfig) { c.Faults = []string{} },
		func(c *results.RunConfig) { c.Seed, c.Schema, c.Repeat, c.Modes = 9, "hotspot_x", 3, []string{"sync"} },
		func(c *results.RunConfig) { c.Suite = map[string]any{"pool_size": 32.0} }, // as read back from JSON
		// A report from before --hot-key-dist ran uniform: so does one that names it.
		func(c *results.RunConfig) { c.HotKeyDist = "uniform" },
		// Over one hot key every distribution is the same work.
		func(c *results.RunConfig) { c.HotKeyDist = "zipf:0.99" },
	}
	for i, set := range same {
		c := base
		set(&c)
		if got, want := c.Shaping(), base.Shaping(); !maps.Equal(got, want) {
			t.Errorf("case %d: shaping %v, want %v", i, got, want)
		}
	}
	different := []func(*results.RunConfig){
		func(c *results.RunConfig) { c.MaxTries = 3 },
		func(c *results.RunConfig) { c.Slots, c.SlotPick = 4, "hash" },
		func(c *results.RunConfig) { c.Rate = 100 },
		func(c *results.RunConfig) { c.RedisPersist = "always" },
		func(c *results.RunConfig) { c.Faults = []string{"terminate-backends@3s"} },
		func(c *results.RunConfig) { c.Suite = map[string]any{"pool_size": 16} },
		func(c *results.RunConfig) { c.Suite = map[string]any{"pool_size": 32, "persistence": "terminal"} },
	}
	for i, set := range different {
		c := base
		set(&c)
		if maps.Equal(c.Shaping(), base.Shaping()) {
			t.Errorf("case %d: %+v shapes the work as %+v does", i, c, base)
		}
	}
}

// A run at another hot key distribution measured something else; uniform is what every run
// before the setting did.
func TestHotKeyDistShapesOverSeveralKeys(t *testing.T) {
	old := results.RunConfig{Requests: 1000, HotKeys: 100}
	for dist, pairs := range map[string]bool{"": true, "uniform": true, "zipf:0.99": false, "zipf:1.2": false, "exponential:3": false} {
		c := old
		c.HotKeyDist = dist
		if got := maps.Equal(c.Shaping(), old.Shaping()); got != pairs {
			t.Errorf("hot_key_dist %q over 100 keys pairs with a report without it: %v, want %v", dist, got, pairs)
		}
	}
	a, b := old, old
	a.HotKeyDist, b.HotKeyDist = "zipf:0.99", "zipf:1.2"
	if maps.Equal(a.Shaping(), b.Shaping()) {
		t.Error("zipf:0.99 and zipf:1.2 shape the work alike")
	}
}

func TestNewRunConfig(t *testing.T) {
	c := results.NewRunConfig(results.RunConfig{Requests: 10, DurationMs: results.Milliseconds(90 * time.Second), MaxTries: 1, RetryBackoffMs: 5, Slots: 1, SlotPick: "hash"},
		map[string]any{"pending-usages": 4, "retry-rate": 0.1})
	want := results.RunConfig{Requests: 10, DurationMs: 90000, Suite: map[string]any{"pending_usages": 4, "retry_rate": 0.1}}
	if c.Requests != want.Requests || c.DurationMs != want.DurationMs || c.MaxTries != 0 || c.RetryBackoffMs != 0 ||
		c.Slots != 0 || c.SlotPick != "" || !maps.Equal(c.Suite, want.Suite) {
		t.Errorf("NewRunConfig = %+v, want %+v", c, want)
	}
	if d := results.Duration(c.DurationMs); d != 90*time.Second {
		t.Errorf("Duration(%g) = %s", c.DurationMs, d)
	}
}

// baseline merge takes the consumers' side of a split run from a consumer: every setting tagged
// split:"consumer", and nothing else.
func TestTakeSplit(t *testing.T) {
	producer := results.RunConfig{Requests: 500, FlushBatchSize: 1000, QueueWorkers: 2, QueueCapacity: 100, DrainTimeoutMs: 1000}
	consumer := results.RunConfig{Requests: 0, FlushBatchSize: 50, QueueWorkers: 8, QueueCapacity: 100, DrainTimeoutMs: 9000,
		DebugSlowFlushPct: 20, ReclaimIdleMs: 300, Role: "consumer", MaxTries: 3}
	c := producer
	c.TakeSplit(results.SplitConsumer, consumer)
	want := producer
	want.FlushBatchSize, want.QueueWorkers, want.DrainTimeoutMs, want.DebugSlowFlushPct, want.ReclaimIdleMs = 50, 8, 9000, 20, 300
	if !reflect.DeepEqual(c, want) {
		t.Errorf("TakeSplit = %+v, want %+v", c, want)
	}
}
