package testkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/testkit/load"
)

// CrashEnv names the test-only environment variable that stops a consumer at one point of
// its batch cycle ("after-read": a batch read, nothing committed; "after-commit": committed,
// not acknowledged). The process prints a line to stderr and freezes there, so that a test can
// SIGKILL it at exactly that point.
const CrashEnv = "HOTSPOTKIT_TEST_CRASH"

// streamRun is what the engine needs about a run on the Redis backend: its role, where
// producers register, and the run-wide counters its checks compare.
type streamRun struct {
	key, group string
	role       redisq.Role
	offset     int64 // a producer's first run-wide request index
	runStats   func(ctx context.Context) (redisq.RunStats, error)
}

// streamKey names the run's stream: the same in every process of a split run (same schema,
// mode and run index), distinct for every run of an invocation.
func streamKey(r *Run) string {
	return fmt.Sprintf("hotspotkit:%s:%d:%s", r.Target.Schema(), r.Index, r.Mode)
}

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
	if c.redis == nil {
		return nil, errors.New("--queue-backend redis: no Redis was opened for this run")
	}
	role := c.role
	flushPool, err := r.newFlushPool(ctx)
	if err != nil {
		return nil, err
	}
	writer := spec.Writer(compact)
	o := redisq.Options[K, T]{
		Options:       queueOptions(r, spec, writer, compact), // modes.go
		Client:        c.redis.client,
		Stream:        streamKey(r),
		Role:          role,
		Fresh:         !c.joining(r.Target),
		Codec:         codec,
		DB:            flushPool,
		Writer:        writer,
		ReclaimIdle:   time.Duration(c.ReclaimIdleMs) * time.Millisecond,
		MaxDeliveries: c.MaxDeliveries,
		Hook:          crashHook(),
	}
	q, err := redisq.New(ctx, o)
	if err != nil {
		flushPool.Close()
		return nil, err
	}
	sr := &streamRun{key: o.Stream, group: redisq.DefaultGroup, role: role, runStats: q.RunStats}
	if role == redisq.RoleProducer {
		sr.offset = int64(c.ProducerID) * r.Requests
	}
	enqueue := func(ctx context.Context, rec T) (queue.Outcome, error) {
		out, err := q.Enqueue(ctx, rec)
		if errors.Is(err, redisq.ErrOutcomeUnknown) {
			return out, load.Unknown(err) // the run looks the request up instead of guessing
		}
		return out, err
	}
	op := func(ctx context.Context, req *load.Request) error {
		return enqueueAll(ctx, req, spec.Records(sr.offset+req.Index), enqueue)
	}
	drain := q.Close
	if role == redisq.RoleConsumer {
		drain = func(ctx context.Context) error {
			if err := waitForProducers(ctx, r, sr, c.ExpectProducers); err != nil {
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
		Faults: map[string]FaultHook{FaultKillConsumer: q.KillConsumer},
		Close: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = q.Close(ctx)
			defer flushPool.Close()
			// A run that was all ours leaves nothing behind in a Redis others may share;
			// the keys of a split run stay for its other processes.
			if role == redisq.RoleBoth && c.redis.mode != RedisEmbedded {
				return q.DeleteKeys(ctx)
			}
			return nil
		},
	}, nil
}

// crashHook maps $HOTSPOTKIT_TEST_CRASH onto redisq's hook (nil when unset).
func crashHook() func(point string, ids []string) {
	point := os.Getenv(CrashEnv)
	if point == "" {
		return nil
	}
	var once sync.Once
	return func(p string, ids []string) {
		if p != point {
			return
		}
		once.Do(func() {
			fmt.Fprintf(os.Stderr, "hotspotkit: %s=%s: consumer stopped at %s holding %d entries (pid %d)\n",
				CrashEnv, point, p, len(ids), os.Getpid())
			select {} // frozen here until the test kills the process
		})
	}
}
