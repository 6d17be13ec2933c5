package testkit

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
)

// redisWorkload is AsyncWorkload on the Redis-streams backend, in the process's role.
func redisWorkload[K comparable, T any](ctx context.Context, r *Run, spec AsyncSpec[K, T], compact bool) (*Workload, error) {
	c := r.Config
	codec := spec.Codec
	if codec == nil {
		var err error
		if codec, err = queue.DefaultCodec[T](); err != nil {
			return nil, fmt.Errorf("--queue-backend redis: %w (export its fields, or set testkit.AsyncSpec.Codec)", err)
		}
	}
	if r.redis == nil {
		return nil, errNoRedis
	}
	role := c.role
	flushPool, err := r.newFlushPool(ctx)
	if err != nil {
		return nil, err
	}
	writer := spec.Writer(compact)
	o := redisq.Options[K, T]{
		Options:       queueOptions(r, spec, writer, compact), // modes.go
		Client:        r.redis.Client,
		Stream:        redisrun.StreamKey(r.Target.Schema(), r.Index, r.Mode.String()),
		Role:          role,
		Fresh:         !c.joining(r.Target),
		Codec:         codec,
		DB:            flushPool,
		Writer:        writer,
		ReclaimIdle:   time.Duration(c.ReclaimIdleMs) * time.Millisecond,
		MaxDeliveries: c.MaxDeliveries,
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
	sr := &redisrun.Stream{Key: o.Stream, Role: role, RunStats: q.RunStats}
	if role == redisq.RoleProducer {
		sr.ProducerID, sr.Offset, sr.Requests = c.ProducerID, int64(c.ProducerID)*r.Requests, r.Requests
	}
	enqueue := func(ctx context.Context, recs []T) (queue.Outcome, error) {
		out, err := q.EnqueueAll(ctx, recs)
		if errors.Is(err, redisq.ErrOutcomeUnknown) {
			return out, load.Unknown(err) // the run looks the request up instead of guessing
		}
		return out, err
	}
	op := func(ctx context.Context, req *load.Request) error {
		return enqueueAll(ctx, req, spec.Records(sr.Offset+req.Index), enqueue)
	}
	drain := q.Close
	if role == redisq.RoleConsumer {
		drain = func(ctx context.Context) error {
			if err := sr.WaitForProducers(ctx, r.Pool, c.ExpectProducers); err != nil {
				_ = q.Close(ctx)
				return err
			}
			return q.Close(ctx) // returns once the stream is empty
		}
	}
	return &Workload{
		Op: op,
		Queue: &QueueHandle{
			Backend:    BackendRedis,
			Compaction: compact,
			FullPolicy: c.QueueFull,
			flushPool:  flushPool,
			Metrics:    q.Metrics,
			PersistLag: q.PersistLag,
			Pause:      q.Pause,
			Resume:     q.Resume,
			Stream:     q.StreamMetrics,
			stream:     sr,
		},
		Drain:  drain,
		Faults: map[string]faults.Hook{faults.KillConsumer: q.KillConsumer},
		Close: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = q.Close(ctx)
			defer flushPool.Close()
			// A run that was all ours leaves nothing behind in a Redis others may share;
			// the keys of a split run stay for its other processes.
			if role == redisq.RoleBoth && r.redis.Mode != redisrun.Embedded {
				return q.DeleteKeys(ctx)
			}
			return nil
		},
	}, nil
}
