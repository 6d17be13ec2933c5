package redisrun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/redisserver"
)

// Target is the Redis an invocation's redis-backed runs share: miniredis in this process
// (embedded), a redis-server we started (managed), or an existing one (url).
type Target struct {
	Mode    string // Embedded, Managed or URL
	Version string // e.g. "redis 7.0.15", "miniredis v2.35.0"
	// Client is the service's: the queue's, the producers' and consumers' (through the route
	// Open was given, if any); control reaches the server directly (FreezeAndCount).
	Client  *redis.Client
	opts    *redis.Options // the Client's, for Recycle
	control *redis.Client
	mini    *miniredis.Miniredis
	server  *redisserver.Server
	url     string // redacted
}

// Route is how the service reaches a Redis at upstream (host:port): the dial function that
// carries its connections there (a delaying proxy's, testkit/internal/netdelay).
type Route func(upstream string) (dial func(ctx context.Context, network, addr string) (net.Conn, error), err error)

// Open starts or reaches the Redis the flags choose, embedded miniredis included (it listens
// on TCP like the others). workers is the number of queue workers the client's pool must serve
// besides redisq's senders; route, when not nil, carries the service's connections.
func Open(ctx context.Context, c StreamConfig, workers int, route Route) (*Target, error) {
	t := &Target{}
	var opts *redis.Options
	switch {
	case c.RedisURL != "":
		t.Mode, t.url = URL, database.RedactURL(c.RedisURL)
		o, err := redis.ParseURL(c.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("--redis-url: %s", database.Redact(err.Error()))
		}
		opts = o
	case c.RedisMode == Managed:
		t.Mode = Managed
		srv, err := redisserver.Start(ctx, redisserver.Config{Persist: c.RedisPersist})
		if err != nil {
			return nil, err
		}
		t.server, t.Version = srv, "redis "+srv.Version()
		opts, _ = redis.ParseURL(srv.URL())
	default:
		t.Mode = Embedded
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return nil, fmt.Errorf("starting the embedded Redis (miniredis): %w", err)
		}
		t.mini, t.Version = m, "miniredis "+moduleVersion("github.com/alicebob/miniredis/v2")
		opts = &redis.Options{Addr: m.Addr()}
	}
	// No go-redis retries: a retried XADD would add a record twice (redisq's doc).
	opts.MaxRetries = -1
	opts.PoolSize = max(opts.PoolSize, workers+redisq.DefaultSenders+16)
	direct := *opts
	direct.PoolSize = 2
	t.control = redis.NewClient(&direct)
	if route != nil {
		dial, err := route(opts.Addr)
		if err != nil {
			return nil, errors.Join(err, t.Close())
		}
		opts.Dialer = dial
	}
	t.Client, t.opts = redis.NewClient(opts), opts
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := t.Client.Ping(pctx).Err(); err != nil {
		err = fmt.Errorf("reaching Redis (%s): %s", t.where(), database.Redact(err.Error()))
		return nil, errors.Join(err, t.Close())
	}
	if t.Mode == URL {
		if info, err := t.Client.InfoMap(pctx, "server").Result(); err == nil {
			t.Version = "redis " + info["Server"]["redis_version"]
		}
	}
	return t, nil
}

func (t *Target) where() string {
	if t.url != "" {
		return t.url
	}
	return t.Mode
}

// Recycle replaces the service's Client by a new one with the same options and closes the
// old one, with every connection its pool kept: the engine calls it between runs, so that each
// run starts on fresh connections and leaves none behind (results.Leftover).
func (t *Target) Recycle() error {
	if t == nil || t.Client == nil {
		return nil
	}
	old := t.Client
	t.Client = redis.NewClient(t.opts)
	return old.Close()
}

// Close closes the client and stops the server this process started.
func (t *Target) Close() error {
	if t == nil {
		return nil
	}
	var err error
	if t.Client != nil {
		err = t.Client.Close()
	}
	if t.control != nil {
		err = errors.Join(err, t.control.Close())
	}
	if t.mini != nil {
		t.mini.Close()
	}
	if t.server != nil {
		err = errors.Join(err, t.server.Stop())
	}
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

// Crash kills the redis-server this process started (SIGKILL) and starts it again after down
// on the same port and data directory; an error for an embedded or --redis-url Redis.
func (t *Target) Crash(ctx context.Context, down time.Duration) error {
	if !t.Managed() {
		return ErrNotManaged
	}
	return t.server.Crash(ctx, down)
}

// ErrNotManaged is Crash's error for a Redis this process did not start.
var ErrNotManaged = errors.New("crash-redis needs --queue-backend redis --redis managed")

// Managed says whether this process started the redis-server (Crash can kill it).
func (t *Target) Managed() bool { return t != nil && t.server != nil }

// FreezeAndCount holds every write command on the server for the next ten seconds (it is
// about to be killed) and returns how many entries the streams hold.
func (t *Target) FreezeAndCount(ctx context.Context, streams []string) (int64, error) {
	if err := t.control.Do(ctx, "CLIENT", "PAUSE", 10000, "WRITE").Err(); err != nil {
		return 0, err
	}
	var n int64
	for _, s := range streams {
		l, err := t.control.XLen(ctx, s).Result()
		if err != nil {
			return 0, err
		}
		n += l
	}
	return n, nil
}
