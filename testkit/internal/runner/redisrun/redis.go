package redisrun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
)

// Target is the Redis an invocation's redis-backed runs share: miniredis in this process
// (embedded), a redis-server we started (managed), a Redis Cluster we started (cluster), or an
// existing server or cluster (url).
type Target struct {
	Mode    string // Embedded, Managed, Cluster or URL
	Version string // e.g. "redis 7.0.15", "miniredis v2.35.0"
	// Client is the service's: the queue's, the producers' and consumers' (through the route
	// Open was given, if any); a *redis.ClusterClient on a cluster. Control reaches the server
	// directly (FreezeAndCount).
	Client      redis.UniversalClient
	opts        *redis.Options        // the Client's, for Recycle (one server)
	clusterOpts *redis.ClusterOptions // the Client's, for Recycle (a cluster)
	control     *redis.Client
	mini        *miniredis.Miniredis
	server      *redisserver.Server
	cluster     *redisserver.Cluster
	url         string // redacted
	persist     string // --redis-persist
	// Masters and Replicas are a cluster's shape (0 for one server).
	Masters, Replicas int
}

// Route is how the service reaches a Redis at upstream (host:port): the dial function that
// carries its connections there (a delaying proxy's, testkit/servers/netdelay).
type Route func(upstream string) (dial func(ctx context.Context, network, addr string) (net.Conn, error), err error)

// ErrClusterRoute refuses a delaying proxy in front of a Redis Cluster: its nodes' addresses
// reach the client in MOVED replies and CLUSTER SLOTS, each would need a proxy of its own.
var ErrClusterRoute = errors.New("--redis-rtt and the network faults on redis are not supported on a Redis Cluster (each node would need a proxy of its own); use one redis-server for them")

// Open starts or reaches the Redis the flags choose, embedded miniredis included (it listens
// on TCP like the others). workers is the number of queue workers the client's pool must serve
// besides redisq's senders; route, when not nil, carries the service's connections.
func Open(ctx context.Context, c StreamConfig, workers int, route Route) (*Target, error) {
	t := &Target{persist: c.RedisPersist}
	var opts *redis.Options
	switch {
	case c.RedisURL != "":
		t.Mode, t.url = URL, database.RedactURL(c.RedisURL)
		seeds, err := ParseSeeds(c.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("--redis-url: %s", database.Redact(err.Error()))
		}
		cluster, err := seedsAreCluster(ctx, seeds)
		if err != nil {
			return nil, fmt.Errorf("--redis-url: %s", database.Redact(err.Error()))
		}
		if cluster {
			o := seeds.Options
			t.clusterOpts = redisserver.NoReplay(&redis.ClusterOptions{Addrs: seeds.Addrs, Username: o.Username, Password: o.Password,
				TLSConfig: o.TLSConfig, DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout})
		}
		opts = seeds.Options
	case c.Redis == Cluster:
		t.Mode = Cluster
		cl, err := redisserver.StartCluster(ctx, redisserver.ClusterConfig{Masters: ClusterMasters, Replicas: c.RedisReplicas, Persist: c.RedisPersist})
		if err != nil {
			return nil, err
		}
		t.cluster, t.Version = cl, "redis "+cl.Version()
		t.clusterOpts = cl.ClusterOptions()
	case c.Redis == Managed:
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
	if t.clusterOpts != nil {
		if route != nil {
			return nil, errors.Join(ErrClusterRoute, t.Close())
		}
		o := t.clusterOpts
		o.MaxRetries = -1
		o.ContextTimeoutEnabled = true // a context's deadline bounds a command's reply
		o.PoolSize = max(o.PoolSize, workers+redisq.DefaultSenders+16)
		t.Client = redis.NewClusterClient(o)
	} else {
		// No go-redis retries: a retried XADD would add a record twice (redisq's doc). A
		// context's deadline bounds a command's reply, not only go-redis's read timeout.
		opts.MaxRetries = -1
		opts.ContextTimeoutEnabled = true
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
	}
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
	switch {
	case t.cluster != nil:
		t.Masters, t.Replicas = t.cluster.Masters(), t.cluster.Replicas()
	case t.clusterOpts != nil:
		if err := t.readShape(pctx); err != nil {
			return nil, errors.Join(err, t.Close())
		}
	}
	return t, nil
}

// seedsAreCluster says whether the seeds are nodes of a Redis Cluster: one seed may be
// either, several must all be cluster nodes.
func seedsAreCluster(ctx context.Context, s Seeds) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, addr := range s.Addrs {
		o := *s.Options
		o.Addr, o.MaxRetries, o.PoolSize = addr, -1, 1
		c := redis.NewClient(&o)
		info, err := c.Info(ctx, "cluster").Result()
		c.Close()
		var rerr redis.Error
		if errors.As(err, &rerr) && !s.Several() {
			return false, nil // a server without the section (miniredis) is no cluster node
		}
		if err != nil {
			return false, fmt.Errorf("seed %s: %v", addr, err)
		}
		if !strings.Contains(info, "cluster_enabled:1") {
			if s.Several() {
				return false, fmt.Errorf("seed %s is not a Redis Cluster node (cluster_enabled:0); give one server's URL alone, or the seeds of one cluster", addr)
			}
			return false, nil
		}
	}
	return true, nil
}

// readShape reads a cluster's masters and replicas per master from CLUSTER SLOTS.
func (t *Target) readShape(ctx context.Context) error {
	slots, err := t.Client.ClusterSlots(ctx).Result()
	if err != nil {
		return fmt.Errorf("CLUSTER SLOTS (%s): %w", t.where(), err)
	}
	masters := map[string]int{}
	for _, s := range slots {
		if len(s.Nodes) > 0 {
			masters[s.Nodes[0].Addr] = len(s.Nodes) - 1
		}
	}
	t.Masters = len(masters)
	for _, r := range masters {
		t.Replicas = max(t.Replicas, r)
	}
	return nil
}

// IsCluster says whether the Redis is a Redis Cluster (Client is a *redis.ClusterClient).
func (t *Target) IsCluster() bool { return t != nil && t.clusterOpts != nil }

// ManagedCluster is the cluster this process started (nil otherwise).
func (t *Target) ManagedCluster() *redisserver.Cluster {
	if t == nil {
		return nil
	}
	return t.cluster
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
	if t.clusterOpts != nil {
		t.Client = redis.NewClusterClient(t.clusterOpts)
	} else {
		t.Client = redis.NewClient(t.opts)
	}
	if err := old.Close(); err != nil && !errors.Is(err, redis.ErrClosed) { // an aborted run's is closed
		return err
	}
	return nil
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
	if t.cluster != nil {
		err = errors.Join(err, t.cluster.Stop())
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
