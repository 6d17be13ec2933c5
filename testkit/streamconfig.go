package testkit

import (
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/redisserver"
)

// Queue backends (--queue-backend) and Redis servers (--redis).
const (
	BackendMemory = "memory"
	BackendRedis  = "redis"

	RedisEmbedded = "embedded" // miniredis, in this process
	RedisManaged  = "managed"  // a redis-server we start and stop
	RedisURL      = "url"      // --redis-url: an existing server
)

// StreamConfig holds the flags of the durable queue backend and of runs split over several
// processes. It is part of Config.
type StreamConfig struct {
	QueueBackend    string
	RedisMode       string
	RedisURL        string
	RedisPersist    string
	ReclaimIdleMs   int
	MaxDeliveries   int
	RoleName        string
	ProducerID      int
	Verify          bool
	ExpectProducers int

	role  redisq.Role
	redis *redisTarget // opened by the engine when the redis backend runs
}

func (c *StreamConfig) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.QueueBackend, "queue-backend", BackendMemory, "async queue backend: memory (in this process) or redis (a Redis stream: durable, shared by processes)")
	fs.StringVar(&c.RedisMode, "redis", RedisEmbedded, "Redis for --queue-backend redis: embedded (miniredis in this process) or managed (a temporary redis-server from PATH)")
	fs.StringVar(&c.RedisURL, "redis-url", "", "use this existing Redis instead (redis://[:password@]host:port/db); required with --role")
	fs.StringVar(&c.RedisPersist, "redis-persist", redisserver.PersistOff, "with --redis managed: the append-only file: off, everysec or always (its appendfsync)")
	fs.IntVar(&c.ReclaimIdleMs, "reclaim-idle-ms", 10000, "redis backend: entries unacknowledged this long (ms) are taken over by another consumer")
	fs.IntVar(&c.MaxDeliveries, "max-deliveries", redisq.DefaultMaxDeliveries, "redis backend: an entry delivered more often goes to the dead-letter stream")
	fs.StringVar(&c.RoleName, "role", "both", "both, or split a run over processes: producer (runs the load, enqueues) or consumer (writes what producers enqueued)")
	fs.IntVar(&c.ProducerID, "producer-id", 0, "--role producer: this producer's number; its requests are indexes [id×requests, (id+1)×requests)")
	fs.BoolVar(&c.Verify, "verify", false, "--role consumer: once the run is over, verify the database against every producer's accepted requests")
	fs.IntVar(&c.ExpectProducers, "expect-producers", 1, "--role consumer: the run is over only once this many producers have registered and finished")
}

// validateStream checks the flags above against the common ones; bad collects errors.
func (c *Config) validateStream(bad func(format string, a ...any)) {
	changed := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if c.fs != nil && c.fs.Changed(n) {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	switch c.QueueBackend {
	case BackendMemory:
		if set := changed("redis", "redis-url", "redis-persist", "reclaim-idle-ms", "max-deliveries"); len(set) > 0 {
			bad("%s only apply to --queue-backend redis", strings.Join(set, ", "))
		}
	case BackendRedis:
		if !slices.ContainsFunc(c.Modes, IsAsync) && len(c.Modes) > 0 {
			bad("--queue-backend redis needs an async mode (async, async-compact) in --modes")
		}
	default:
		bad("--queue-backend %q: want memory or redis", c.QueueBackend)
	}
	switch {
	case c.RedisURL != "" && changed("redis") != nil:
		bad("--redis and --redis-url exclude each other (--redis-url is an existing server)")
	case c.RedisURL != "":
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			bad("--redis-url: %s", database.Redact(err.Error()))
		}
	case c.RedisMode == RedisManaged:
		if c.QueueBackend == BackendRedis {
			if _, err := redisserver.FindBinary(""); err != nil {
				bad("--redis managed: %v", err)
			}
		}
	case c.RedisMode != RedisEmbedded:
		bad("--redis %q: want embedded or managed (or give --redis-url)", c.RedisMode)
	}
	if !slices.Contains(redisserver.PersistSettings, c.RedisPersist) {
		bad("--redis-persist %q: want %s", c.RedisPersist, strings.Join(redisserver.PersistSettings, ", "))
	} else if changed("redis-persist") != nil && (c.RedisURL != "" || c.RedisMode != RedisManaged) {
		bad("--redis-persist applies to --redis managed only")
	}
	if c.ReclaimIdleMs < 1 || c.MaxDeliveries < 1 {
		bad("--reclaim-idle-ms and --max-deliveries must be at least 1")
	}

	role, err := redisq.ParseRole(c.RoleName)
	if err != nil {
		bad("--role: %v", err)
		return
	}
	c.role = role
	if c.Verify && role != redisq.RoleConsumer {
		bad("--verify applies to --role consumer (a run with --role both always verifies)")
	}
	if changed("producer-id") != nil && role != redisq.RoleProducer {
		bad("--producer-id applies to --role producer")
	}
	if changed("expect-producers") != nil && role != redisq.RoleConsumer {
		bad("--expect-producers applies to --role consumer")
	}
	if role == redisq.RoleBoth {
		return
	}
	// A run split over processes: everyone must find the same database, schema, stream.
	if c.QueueBackend != BackendRedis || c.RedisURL == "" || c.PostgresURL == "" || c.Schema == "" {
		bad("--role %s needs --queue-backend redis, --redis-url, --postgres-url and --schema (every process of the run uses the same)", role)
	}
	if len(c.Modes) != 1 || !IsAsync(c.Modes[0]) {
		bad("--role %s runs exactly one async mode (--modes async or --modes async-compact)", role)
	}
	if c.Repeat != 1 || len(c.Levels) > 0 {
		bad("--role %s cannot be combined with --repeat or --levels", role)
	}
	if role == redisq.RoleProducer && c.Requests < 1 {
		bad("--role producer needs --requests (its index range is --producer-id × --requests)")
	}
	if c.ProducerID < 0 || c.ExpectProducers < 1 {
		bad("--producer-id must not be negative and --expect-producers must be at least 1")
	}
	// The schema outlives every process of the run: drop it yourself once it is verified.
	c.KeepSchema = true
}

// joining reports whether this process joins a run another process set up (its tables and
// seed rows, its stream): a producer or consumer that did not create the schema.
func (c *Config) joining(t *database.Target) bool {
	return c.role != redisq.RoleBoth && !t.Created()
}

func (c *StreamConfig) redisNeeded(modes []string) bool {
	return c.QueueBackend == BackendRedis && slices.ContainsFunc(modes, IsAsync)
}
