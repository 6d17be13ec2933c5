package asyncrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/queue/redisq/redisqtest"
	"github.com/hotspotkit/hotspotkit/testkit/internal/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runenv"
)

// errNoRedis is a Redis run without an opened Redis: an engine bug, not bad input.
var errNoRedis = errors.New("--queue-backend redis: no Redis was opened for this run")

// openRedis is Open on the Redis-streams backend, in the process's role.
func openRedis[K comparable, T any](ctx context.Context, env *runenv.Env, spec Spec[K, T]) (*Queue[T], error) {
	c := env.Queue
	codec := spec.Codec
	if codec == nil {
		var err error
		if codec, err = queue.DefaultCodec[T](); err != nil {
			return nil, fmt.Errorf("--queue-backend redis: %w (export its fields, or set testkit.AsyncSpec.Codec)", err)
		}
	}
	if env.Redis == nil {
		return nil, errNoRedis
	}
	flushPool, err := newFlushPool(ctx, env)
	if err != nil {
		return nil, err
	}
	o := redisq.Options[K, T]{
		Options:       options(env, spec),
		Client:        env.Redis.Client,
		Stream:        redisrun.StreamKey(env.Target.Schema(), env.Index, env.Mode),
		Role:          c.Role,
		Fresh:         c.Fresh,
		Codec:         codec,
		DB:            flushPool,
		Writer:        spec.Writer,
		ReclaimIdle:   c.ReclaimIdle,
		MaxDeliveries: c.MaxDeliveries,
		Shards:        c.Shards,
		PruneInterval: -1, // every applied id stays: the stream checks count them
	}
	if hook := redisrun.CrashHook(); hook != nil {
		redisqtest.SetHook(hook)
	}
	q, err := redisq.New(ctx, o)
	if err != nil {
		flushPool.Close()
		return nil, err
	}
	sr := &redisrun.Stream{Key: o.Stream, Streams: q.Streams(), Role: c.Role, RunStats: q.RunStats}
	if c.Role == redisq.RoleProducer {
		sr.ProducerID, sr.Offset, sr.Requests = c.ProducerID, int64(c.ProducerID)*env.Requests, env.Requests
	}
	enqueue := func(ctx context.Context, recs []T) (queue.Outcome, error) {
		out, err := q.EnqueueAll(ctx, recs)
		if errors.Is(err, redisq.ErrOutcomeUnknown) {
			return out, load.Unknown(err) // the run looks the request up instead of guessing
		}
		return out, err
	}
	drain := q.Close
	if c.Role == redisq.RoleConsumer {
		drain = func(ctx context.Context) error {
			if err := sr.WaitForProducers(ctx, env.Pool, c.ExpectProducers); err != nil {
				_ = q.Close(ctx)
				return err
			}
			return q.Close(ctx) // returns once the stream is empty
		}
	}
	env.Backend = &runenv.Backend{
		Name:          redisrun.BackendRedis,
		Compaction:    spec.Compact,
		FullPolicy:    c.FullPolicy,
		FlushPool:     flushPool,
		Metrics:       q.Metrics,
		PersistLag:    q.PersistLag,
		Pause:         q.Pause,
		Resume:        q.Resume,
		StreamMetrics: q.StreamMetrics,
		Stream:        sr,
	}
	return &Queue[T]{
		Enqueue: enqueue,
		Offset:  sr.Offset,
		Drain:   drain,
		Faults:  map[string]faults.Hook{faults.KillConsumer: q.KillConsumer},
		Close: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = q.Close(ctx)
			defer flushPool.Close()
			// A run that was all ours leaves nothing behind in a Redis others may share;
			// the keys of a split run stay for its other processes.
			if c.Role == redisq.RoleBoth && env.Redis.Mode != redisrun.Embedded {
				return q.DeleteKeys(ctx)
			}
			return nil
		},
	}, nil
}
