package testkit

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/redisserver"
)

// redisTarget is the Redis an invocation's redis-backed runs share: miniredis in this
// process (embedded), a redis-server we started (managed), or an existing one (url).
type redisTarget struct {
	mode    string
	client  *redis.Client
	mini    *miniredis.Miniredis
	server  *redisserver.Server
	version string
	url     string // redacted
}

// openRedis starts or reaches the Redis the flags choose, when a run needs one, and records
// the queue backend (and Redis) in the report's environment.
func (e *engine) openRedis(ctx context.Context) error {
	c := e.cfg
	if slices.ContainsFunc(c.Modes, IsAsync) {
		e.report.Environment.QueueBackend = c.QueueBackend
	}
	if !c.redisNeeded(c.Modes) {
		return nil
	}
	t, err := openRedisTarget(ctx, c)
	if err != nil {
		return err
	}
	c.redis = t
	env := &e.report.Environment
	env.RedisMode, env.RedisVersion = t.mode, t.version
	return nil
}

func openRedisTarget(ctx context.Context, c *Config) (*redisTarget, error) {
	t := &redisTarget{}
	var opts *redis.Options
	switch {
	case c.RedisURL != "":
		t.mode, t.url = RedisURL, database.RedactURL(c.RedisURL)
		o, err := redis.ParseURL(c.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("--redis-url: %s", database.Redact(err.Error()))
		}
		opts = o
	case c.RedisMode == RedisManaged:
		t.mode = RedisManaged
		srv, err := redisserver.Start(ctx, redisserver.Config{Persist: c.RedisPersist})
		if err != nil {
			return nil, err
		}
		t.server, t.version = srv, "redis "+srv.Version()
		opts, _ = redis.ParseURL(srv.URL())
	default:
		t.mode = RedisEmbedded
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return nil, fmt.Errorf("starting the embedded Redis (miniredis): %w", err)
		}
		t.mini, t.version = m, "miniredis "+moduleVersion("github.com/alicebob/miniredis/v2")
		opts = &redis.Options{Addr: m.Addr()}
	}
	// No go-redis retries: a retried XADD would add a record twice (redisq's doc).
	opts.MaxRetries = -1
	opts.PoolSize = max(opts.PoolSize, c.QueueWorkers+redisq.DefaultSenders+16)
	t.client = redis.NewClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := t.client.Ping(pctx).Err(); err != nil {
		err = fmt.Errorf("reaching Redis (%s): %s", t.where(), database.Redact(err.Error()))
		if t.mode == RedisURL {
			err = usageError{err}
		}
		return nil, errors.Join(err, t.Close())
	}
	if t.mode == RedisURL {
		if info, err := t.client.InfoMap(pctx, "server").Result(); err == nil {
			t.version = "redis " + info["Server"]["redis_version"]
		}
	}
	return t, nil
}

func (t *redisTarget) where() string {
	if t.url != "" {
		return t.url
	}
	return t.mode
}

// Close closes the client and stops the server this process started.
func (t *redisTarget) Close() error {
	if t == nil {
		return nil
	}
	var err error
	if t.client != nil {
		err = t.client.Close()
	}
	if t.mini != nil {
		t.mini.Close()
	}
	if t.server != nil {
		err = errors.Join(err, t.server.Stop())
	}
	return err
}

func (e *engine) closeRedis() error {
	if e.cfg == nil || e.cfg.redis == nil {
		return nil
	}
	err := e.cfg.redis.Close()
	e.cfg.redis = nil
	return err
}

func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}
