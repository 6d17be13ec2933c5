// Package redisrun is the Redis-streams queue backend, everything of Redis a run needs beside
// the queue itself (package queue/redisq) and the servers (package testkit/servers/redisserver): the
// choice of the invocation's backend (Choose, Queues), a run's queue on a stream in this
// process's role (Redis, a backend.Backend: both, producer or consumer), the flags of the
// backend and of runs split over processes (StreamConfig), the Redis those runs share (Target:
// miniredis in this process, a managed redis-server or cluster, or --redis-url) with its
// faults, and the protocol by which the producer and consumer processes of one run meet in
// the run's database, PostgreSQL or MySQL (Stream: registration, recorded outcomes, run-wide
// counters). It knows nothing of suites or modes.
package redisrun

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/backend"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
)

// Queue backends (--queue-backend) and Redis servers (--redis).
const (
	Embedded = "embedded" // miniredis, in this process
	Managed  = "managed"  // a redis-server we start and stop
	Cluster  = "cluster"  // a Redis Cluster we start and stop (3 masters, --redis-replicas each)
	URL      = "url"      // --redis-url: an existing server
)

// StreamConfig is the settings of the durable queue backend and of runs split over several
// processes (--queue-backend, --redis*, --stream-shards, --reclaim-idle-ms, --max-deliveries,
// --role and friends), as results.RunConfig declares them and the plan's flags set them:
// read-only once validated. The Redis URL in it is the one given (the report's is redacted).
type StreamConfig struct{ *results.RunConfig }

// ManagedRedis says whether the flags ask for a redis-server this run starts (--redis
// managed, no --redis-url): the only Redis that --redis-persist shapes and crash-redis kills.
func (c StreamConfig) ManagedRedis() bool { return c.RedisURL == "" && c.Redis == Managed }

// ManagedCluster says whether the flags ask for a Redis Cluster this run starts (--redis
// cluster): the one the cluster faults act on.
func (c StreamConfig) ManagedCluster() bool { return c.RedisURL == "" && c.Redis == Cluster }

// ClusterMasters is the number of masters of the managed cluster.
const ClusterMasters = 3

// Common is what validating the stream flags needs to know of the engine's other flags.
type Common struct {
	Modes, AsyncModes int // modes in --modes, and how many of them are async
	DatabaseURL       string
	Schema            string
	Repeat            int
	Requests          int64
}

// Validate checks the flags above against the common ones (fs tells which were given; bad
// collects errors) and returns the process's role.
func (c StreamConfig) Validate(fs *pflag.FlagSet, common Common, bad func(format string, a ...any)) redisq.Role {
	changed := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if fs != nil && fs.Changed(n) {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	switch c.QueueBackend {
	case backend.NameMemory:
		if set := changed("redis", "redis-url", "redis-persist", "redis-replicas", "stream-shards", "reclaim-idle-ms", "max-deliveries"); len(set) > 0 {
			bad("%s only apply to --queue-backend redis", strings.Join(set, ", "))
		}
	case backend.NameRedis:
		if common.AsyncModes == 0 && common.Modes > 0 {
			bad("--queue-backend redis needs an async mode (async, async-compact) in --modes")
		}
	default:
		bad("--queue-backend %q: want memory or redis", c.QueueBackend)
	}
	switch {
	case c.RedisURL != "" && changed("redis") != nil:
		bad("--redis and --redis-url exclude each other (--redis-url is an existing server)")
	case c.RedisURL != "":
		if _, err := ParseSeeds(c.RedisURL); err != nil {
			bad("--redis-url: %s", database.Redact(err.Error()))
		}
	case c.Redis == Managed || c.Redis == Cluster:
		if c.QueueBackend == backend.NameRedis {
			if _, err := redisserver.FindBinary(""); err != nil {
				bad("--redis %s: %v", c.Redis, err)
			}
		}
	case c.Redis != Embedded:
		bad("--redis %q: want embedded, managed or cluster (or give --redis-url)", c.Redis)
	}
	if !slices.Contains(redisserver.PersistSettings, c.RedisPersist) {
		bad("--redis-persist %q: want %s", c.RedisPersist, strings.Join(redisserver.PersistSettings, ", "))
	} else if changed("redis-persist") != nil && !c.ManagedRedis() && !c.ManagedCluster() {
		bad("--redis-persist applies to --redis managed or cluster only")
	}
	if c.RedisReplicas < 0 || c.RedisReplicas > 2 {
		bad("--redis-replicas %d: want 0, 1 or 2", c.RedisReplicas)
	} else if changed("redis-replicas") != nil && !c.ManagedCluster() {
		bad("--redis-replicas applies to --redis cluster only (a cluster this run starts)")
	}
	if c.StreamShards < 1 || c.StreamShards > 1024 {
		bad("--stream-shards %d: want 1 to 1024", c.StreamShards)
	}
	if c.ReclaimIdleMs < 1 || c.MaxDeliveries < 1 {
		bad("--reclaim-idle-ms and --max-deliveries must be at least 1")
	}

	role, err := redisq.ParseRole(c.Role)
	if err != nil {
		bad("--role: %v", err)
		return redisq.RoleBoth
	}
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
		return role
	}
	// A run split over processes: everyone must find the same database, schema, stream.
	if c.QueueBackend != backend.NameRedis || c.RedisURL == "" || common.DatabaseURL == "" || common.Schema == "" {
		bad("--role %s needs --queue-backend redis, --redis-url, --postgres-url (or --mysql-url) and --schema (every process of the run uses the same)", role)
	}
	if common.Modes != 1 || common.AsyncModes != 1 {
		bad("--role %s runs exactly one async mode (--modes async or --modes async-compact)", role)
	}
	if common.Repeat != 1 { // and no ladder: package plan refuses a ladder with any --role
		bad("--role %s cannot be combined with --repeat", role)
	}
	if role == redisq.RoleProducer && common.Requests < 1 {
		bad("--role producer needs --requests (its index range is --producer-id × --requests)")
	}
	if c.ProducerID < 0 || c.ExpectProducers < 1 {
		bad("--producer-id must not be negative and --expect-producers must be at least 1")
	}
	return role
}
