package redisrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/queue/redisq/redisqtest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/backend"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/runenv"
)

// Queues makes the backend of each run of an invocation, chosen once from the flags: the
// in-process queue, or a Redis stream in this process's role. The Redis is opened when the
// invocation has an async mode on it (Choose).
type Queues struct {
	target *Target // nil: the in-process queue
	cfg    StreamConfig
	role   redisq.Role
	fresh  bool
}

// Choose opens what the flags choose for the invocation's queues: for --queue-backend redis
// and an async mode, the Redis (Open) — recorded in env — else nothing. fresh says the streams
// are this process's to start afresh (it did not join a split run); workers is
// --queue-workers; route carries the service's connections to Redis (nil: direct).
func Choose(ctx context.Context, c StreamConfig, role redisq.Role, anyAsync, fresh bool, workers int, route Route, env *results.Environment) (*Queues, error) {
	qs := &Queues{cfg: c, role: role, fresh: fresh}
	if anyAsync {
		env.QueueBackend = c.QueueBackend
	}
	if c.QueueBackend != backend.NameRedis || !anyAsync {
		return qs, nil
	}
	t, err := Open(ctx, c, workers, route)
	if err != nil {
		return nil, err
	}
	qs.target = t
	env.RedisMode, env.RedisVersion = t.Mode, t.Version
	env.RedisTopology = &results.RedisTopology{Cluster: t.IsCluster(), Masters: max(t.Masters, 1), ReplicasPerMaster: t.Replicas, StreamShards: c.StreamShards}
	return qs, nil
}

// New is the backend of one run whose mode goes through the queue.
func (qs *Queues) New() backend.Backend {
	if qs.target == nil {
		return &backend.Memory{}
	}
	return &Redis{t: qs.target, cfg: qs.cfg, role: qs.role, fresh: qs.fresh}
}

// AfterRun closes the run's Redis connections: each run starts on fresh ones and leaves none
// behind (results.Leftover).
func (qs *Queues) AfterRun() error {
	if qs == nil {
		return nil
	}
	if err := qs.target.Recycle(); err != nil {
		return fmt.Errorf("closing the run's Redis connections: %w", err)
	}
	return nil
}

// Close closes the Redis and stops the server this process started (nil Queues: nothing was
// opened).
func (qs *Queues) Close() error {
	if qs == nil {
		return nil
	}
	err := qs.target.Close()
	qs.target = nil
	return err
}

// Redis is the backend of a run whose queue is on a Redis stream, in this process's role:
// both (this process produces and consumes), producer (runs the load, enqueues) or consumer
// (runs no load, writes what the producers enqueued; with --verify, verifies the whole run).
// It also strikes the Redis faults (faults.RedisTarget).
type Redis struct {
	backend.Opened
	t     *Target
	cfg   StreamConfig
	role  redisq.Role
	fresh bool

	q       *redisq.Queue[any, any]
	stream  *Stream
	ping    func(context.Context) error // the run's client's
	compact bool
	policy  queue.FullPolicy
}

// streamQueue is the Redis backend's queue as asyncrun sees it.
type streamQueue struct {
	b     *Redis
	env   *runenv.Env
	drain func(ctx context.Context) error
}

func (b *Redis) OpenQueue(ctx context.Context, env *runenv.Env, spec runenv.Spec) (runenv.OpenedQueue, error) {
	if b.q != nil {
		return nil, errors.New("the run's queue is open already")
	}
	if spec.Codec == nil {
		return nil, fmt.Errorf("--queue-backend redis: %w (export its fields, or set testkit.AsyncSpec.Codec)", spec.CodecErr)
	}
	flushPool, err := backend.FlushPool(ctx, env)
	if err != nil {
		return nil, err
	}
	o := redisq.Options[any, any]{
		Options:       backend.Options(env, backend.ErasedKeys(spec), spec.Writer, spec.Compact),
		Client:        b.t.Client,
		Stream:        StreamKey(env.Target.Schema(), env.Index, env.Mode),
		Role:          b.role,
		Fresh:         b.fresh,
		Codec:         spec.Codec,
		DB:            flushPool,
		Writer:        spec.Writer,
		ReclaimIdle:   time.Duration(b.cfg.ReclaimIdleMs) * time.Millisecond,
		MaxDeliveries: b.cfg.MaxDeliveries,
		Shards:        b.cfg.StreamShards,
		PruneInterval: -1, // every applied id stays: the stream checks count them
	}
	if hook := CrashHook(); hook != nil {
		redisqtest.SetHook(hook)
	}
	q, err := redisq.New(ctx, o)
	if err != nil {
		flushPool.Close()
		return nil, err
	}
	sr := &Stream{Key: o.Stream, Streams: q.Streams(), Role: b.role, RunStats: q.RunStats}
	if b.role == redisq.RoleProducer {
		sr.ProducerID, sr.Offset, sr.Requests = b.cfg.ProducerID, int64(b.cfg.ProducerID)*env.Requests, env.Requests
	}
	b.q, b.stream, b.compact, b.policy = q, sr, spec.Compact, backend.FullPolicy(env)
	b.Open(q, flushPool)
	client := b.t.Client // the run's (Recycle replaces it after the run)
	b.ping = func(ctx context.Context) error { return client.Ping(ctx).Err() }
	sq := &streamQueue{b: b, env: env, drain: q.Close}
	if b.role == redisq.RoleConsumer {
		sq.drain = func(ctx context.Context) error {
			if err := sr.WaitForProducers(ctx, env.Pool, b.cfg.ExpectProducers); err != nil {
				_ = q.Close(ctx)
				return err
			}
			return q.Close(ctx) // returns once the stream is empty
		}
	}
	return sq, nil
}

func (sq *streamQueue) EnqueueAll(ctx context.Context, recs []any) (queue.Outcome, error) {
	out, err := sq.b.q.EnqueueAll(ctx, recs)
	if errors.Is(err, redisq.ErrOutcomeUnknown) {
		return out, load.Unknown(err) // the run looks the request up instead of guessing
	}
	return out, err
}

func (sq *streamQueue) Offset() int64                   { return sq.b.stream.Offset }
func (sq *streamQueue) Drain(ctx context.Context) error { return sq.drain(ctx) }

func (sq *streamQueue) Faults() map[string]faults.Hook {
	return map[string]faults.Hook{faults.KillConsumer: sq.b.q.KillConsumer}
}

func (sq *streamQueue) Close() error {
	b := sq.b
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.q.Close(ctx)
	defer b.WorkersPool().Close()
	// A run that was all ours leaves nothing behind in a Redis others may share; the keys of
	// a split run stay for its other processes.
	if b.role == redisq.RoleBoth && b.t.Mode != Embedded {
		return b.q.DeleteKeys(ctx)
	}
	return nil
}

// Warm opens the load's connections (none in a consumer, which runs no load) and the
// consumers' pool.
func (b *Redis) Warm(ctx context.Context, loadPool sqldb.Pool, n int) error {
	if b.role == redisq.RoleConsumer {
		return b.WarmWorkers(ctx)
	}
	return b.Opened.Warm(ctx, loadPool, n)
}

// RunLoad runs the load in this process's role: a consumer runs none, a producer registers
// first and records its outcomes after.
func (b *Redis) RunLoad(ctx context.Context, pool sqldb.Pool, run func() (*load.Result, error)) (*load.Result, error) {
	switch b.role {
	case redisq.RoleConsumer:
		return EmptyResult(), nil
	case redisq.RoleProducer:
		if err := b.stream.Register(ctx, pool); err != nil {
			return nil, err
		}
		res, err := run()
		if err != nil {
			return nil, err
		}
		if err := b.stream.Finish(ctx, pool, res); err != nil {
			return nil, err
		}
		return res, nil
	}
	return run()
}

func (b *Redis) Figures() backend.Figures {
	if b.q == nil {
		return nil
	}
	return b
}

func (b *Redis) Stream() *results.Stream {
	s := results.Stream(b.q.StreamMetrics())
	return &s
}

func (b *Redis) Report() *results.Queue {
	return backend.Report(backend.NameRedis, b.compact, b.policy, b.q.Metrics(), b.q.PersistLag(), b.Stream())
}

// Verification is the run's verification in this process's role. A producer checks that it
// recorded its accepted requests for the consumers; a plain consumer that the producers
// finished and the stream is empty: neither runs the suite's checks (ownPart). A consumer
// with --verify verifies the run-wide requests the producers recorded, and both it and a
// process of --role both compare the stream's run-wide counters with the database.
func (b *Redis) Verification(ctx context.Context, env *runenv.Env, res *load.Result, check backend.Check) (*load.Result, bool, error) {
	sr := b.stream
	if sr == nil {
		return res, false, nil
	}
	switch b.role {
	case redisq.RoleProducer:
		accepted, err := sr.Accepted(ctx, env.Pool)
		if err != nil {
			return nil, false, err
		}
		check("producer: accepted requests recorded for the consumers", res.Outcomes.Count(load.Succeeded), accepted)
		return res, true, nil
	case redisq.RoleConsumer:
		registered, finished, err := sr.Producers(ctx, env.Pool)
		if err != nil {
			return nil, false, err
		}
		check("producers finished (of those registered)", int64(registered), int64(finished))
		if !b.cfg.Verify {
			rs, err := sr.RunStats(ctx)
			if err != nil {
				return nil, false, err
			}
			check("stream: entries left unacknowledged", 0, rs.Length)
			return res, true, nil
		}
		if res, err = sr.ProducersResult(ctx, env.Pool); err != nil {
			return nil, false, err
		}
		// The suite verifies the run-wide requests, not this process's --requests (a suite
		// that seeds per request, such as settlement, counts its seed from it).
		env.Requests = res.Outcomes.Len()
	}
	return res, false, b.streamChecks(ctx, env, check)
}

// streamChecks compares the run-wide counters every process of the run kept in Redis with
// the database: every accepted entry acknowledged, and every id in queue_applied_entries
// acknowledged exactly once as applied, duplicate or written on its own.
func (b *Redis) streamChecks(ctx context.Context, env *runenv.Env, check backend.Check) error {
	rs, err := b.stream.RunStats(ctx)
	if err != nil {
		return err
	}
	ids, err := b.stream.AppliedEntries(ctx, env.Target.Admin())
	if err != nil {
		return err
	}
	check("stream: entries left unacknowledged", 0, rs.Length)
	check("stream: acknowledged = accepted (run-wide)", rs.Accepted, rs.Acked)
	check("stream: entries dead-lettered", 0, rs.DeadLettered)
	check("stream: applied entry ids = applied + duplicate + fallback acknowledgements", rs.Applied+rs.Duplicate+rs.Fallback, ids)
	return nil
}

// Server is the Redis the run's queue is on.
func (b *Redis) Server() (string, func(context.Context) error) {
	if b.q == nil {
		return "", nil
	}
	return "Redis", b.ping
}

// AbortOn closes the run's Redis client once hard ends, so that what waits on a Redis that
// does not answer fails at once: go-redis bounds a read by its deadline, not by a cancelled
// context.
func (b *Redis) AbortOn(hard context.Context) (stop func()) {
	if b.q == nil {
		return func() {}
	}
	client := b.t.Client // the run's (Recycle replaces it after the run)
	unwatch := context.AfterFunc(hard, func() { _ = client.Close() })
	return func() { unwatch() }
}

var _ faults.RedisTarget = (*Redis)(nil)

// serverFaultTimeout bounds a failover or a reshard once struck.
const serverFaultTimeout = 2 * time.Minute

// CrashRedis kills the managed redis-server. Just before, it counts the entries the stream
// holds not yet acknowledged, exactly: the consumers are paused (none holds a batch read but
// not acknowledged), every write command is held by CLIENT PAUSE WRITE (no entry added or
// acknowledged from then on), the count is read, and the consumers resumed — their next
// command waits on the paused server and dies with it.
func (b *Redis) CrashRedis(ctx context.Context, down time.Duration) (string, error) {
	if !b.t.Managed() { // before pausing the consumers of a server it cannot crash
		return "", ErrNotManaged
	}
	held := "an unknown number of"
	if b.q != nil {
		b.q.Pause()
		n, err := b.t.FreezeAndCount(ctx, b.stream.Streams)
		b.q.Resume()
		if err == nil {
			held = fmt.Sprint(n)
		}
	}
	if err := b.t.Crash(ctx, down); err != nil {
		return "", err
	}
	return fmt.Sprintf("redis-server SIGKILLed holding %s entries not yet acknowledged, started again after %s on the same port and data (appendonly %s)",
		held, down, b.cfg.RedisPersist), nil
}

// FailoverRedis kills a master of the managed cluster, counting what it held as CrashRedis
// does (Target.Failover).
func (b *Redis) FailoverRedis(ctx context.Context) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serverFaultTimeout)
	defer cancel()
	var hold, release func()
	base := ""
	if b.q != nil {
		hold, release, base = b.q.Pause, b.q.Resume, b.stream.Key
	}
	return b.t.Failover(ctx, base, hold, release)
}

// ReshardRedis moves the slots the queue uses on a master of the managed cluster to another.
func (b *Redis) ReshardRedis(ctx context.Context) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serverFaultTimeout)
	defer cancel()
	return b.t.Reshard(ctx)
}
