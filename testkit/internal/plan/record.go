package plan

import (
	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// record is what the report records of the plan for every run (RunConfig completes it per
// run): the engine's settings typed, and the suite's own flags (those its Flags registered,
// named in own) by flag name. Which of them shape the work, and which are left out when they
// have no effect, is results.RunConfig's to say.
func (c *parser) record(own map[string]bool) {
	p := c.Plan
	p.recorded = results.RunConfig{
		DurationMs: results.Milliseconds(p.Duration), WarmupMs: results.Milliseconds(p.Warmup),
		MaxConnections: p.MaxConnections, HotKeys: p.HotKeys, MonitorIntervalMs: p.MonitorIntervalMs,
		Seed: p.Seed, Modes: testkit.ModeNames(p.Modes), Repeat: p.Repeat, Levels: p.Levels,

		MaxTries: p.MaxTries, RetryBackoffMs: p.RetryBackoffMs, RetryClasses: p.RetryClasses,
		DebugLoseCommitEvery: p.LoseCommitEvery, DebugSlowFlushPct: p.SlowFlushPct,

		SlotsLevels: p.SlotsLevels,

		FlushBatchSize: p.FlushBatchSize, FlushIntervalMs: p.FlushIntervalMs,
		QueueCapacity: p.QueueCapacity, QueueWorkers: p.QueueWorkers, QueueFull: p.QueueFull.String(),
		QueueRetries: p.QueueRetries, QueueRetryBackoffMs: p.QueueRetryBackoffMs,
		DrainTimeoutMs:   results.Milliseconds(p.DrainTimeout),
		RequestTimeoutMs: results.Milliseconds(p.RequestTimeout), ReconcileTimeoutMs: results.Milliseconds(p.ReconcileTimeout),
		ShutdownTimeoutMs: results.Milliseconds(p.ShutdownTimeout),
		QueueBackend:      p.QueueBackend, Redis: p.RedisMode, RedisURL: database.RedactURL(p.RedisURL),
		RedisPersist: p.RedisPersist, RedisReplicas: p.RedisReplicas, StreamShards: p.StreamShards, ReclaimIdleMs: p.ReclaimIdleMs, MaxDeliveries: p.MaxDeliveries,
		Role: p.RoleName, ProducerID: p.ProducerID, Verify: p.Verify, ExpectProducers: p.ExpectProducers,

		Faults: c.faultsRaw, FaultEveryMs: results.Milliseconds(p.FaultEvery),

		// DBRTTMs is the run's own in a ladder (the engine sets it per rung).
		DBRTTMs: results.Milliseconds(p.DBRTT), DBRTTJitterMs: results.Milliseconds(p.DBRTTJitter),
		RedisRTTMs: results.Milliseconds(p.RedisRTT), RedisRTTJitterMs: results.Milliseconds(p.RedisRTTJitter),
		RTTLevelsMs: rttLevelsMs(p.RTTLevels),

		ManagedPostgres: p.PostgresURL == "", UnsafeNoFsync: p.UnsafeFsync,
		PostgresURL: database.RedactURL(p.PostgresURL), PgBinDir: p.PgBinDir, PgUser: p.PgUser, PgDir: p.PgDir,
		PgDownloadCache: p.PgDownload.CachePath, PgDownloadURL: p.PgDownload.RepositoryURL,
		PgDownloadVersion: p.PgDownload.Major,
		Schema:            p.Schema, KeepSchema: p.KeepSchema, ReuseSchema: p.ReuseSchema,
	}
	if p.HotSets {
		p.recorded.HotKeyDist = p.HotKeyDist.String()
	}
	p.suiteFlags = map[string]any{}
	c.fs.VisitAll(func(f *pflag.Flag) {
		if own[f.Name] {
			p.suiteFlags[f.Name] = flagValue(f)
		}
	})
}

// RunConfig is what the report records of a run at rate (0: closed loop) with concurrency
// workers (or its ladder level), requests and slots (0: a suite without them).
func (c *Plan) RunConfig(rate float64, concurrency int, requests int64, slots int) results.RunConfig {
	rc := c.recorded
	rc.Rate, rc.Concurrency, rc.Requests, rc.Slots = rate, concurrency, requests, slots
	if rate > 0 {
		o := c.OpenLoop
		rc.Arrivals, rc.RampMs, rc.MaxLagMs = string(o.Arrivals), results.Milliseconds(o.Ramp), results.Milliseconds(o.MaxLag)
		rc.Rates, rc.SLOP99Ms = o.Rates, o.SLOP99Ms
	}
	if c.Slotted && (slots > 1 || len(c.SlotsLevels) > 0) {
		rc.SlotPick = c.SlotPick
	}
	return results.NewRunConfig(rc, c.suiteFlags)
}
