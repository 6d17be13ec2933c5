package redisq

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/internal/core"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Role says which side of the stream a process runs.
type Role int

const (
	// RoleBoth produces and consumes (one process does the whole run).
	RoleBoth Role = iota
	// RoleProducer only adds entries; consumers elsewhere write them.
	RoleProducer
	// RoleConsumer only reads, writes and acknowledges entries.
	RoleConsumer
)

var roleNames = core.NewNames[Role]("role", "both", "producer", "consumer")

func (r Role) String() string { return roleNames.Name(r) }

// ParseRole accepts "both", "producer" or "consumer" (case-insensitive).
func ParseRole(s string) (Role, error) { return roleNames.Parse(s) }

func (r Role) produces() bool { return r == RoleBoth || r == RoleProducer }
func (r Role) consumes() bool { return r == RoleBoth || r == RoleConsumer }

// Defaults applied by New to the Redis-only options left unset; the options shared with
// queue.Options take queue's defaults.
const (
	DefaultGroup            = "hotspotkit"
	DefaultBlock            = 250 * time.Millisecond
	DefaultReclaimIdle      = 30 * time.Second
	DefaultMaxDeliveries    = 5
	DefaultDeadLetterMaxLen = 10000
	DefaultSenders          = 4
	DefaultSendBatch        = 512
	DefaultAppliedTable     = "queue_applied_entries"
	DefaultPruneInterval    = time.Minute
	DefaultShardLease       = 3 * time.Second
)

// Options configure a Queue. They are validated once by New and never change afterwards.
type Options[K comparable, T any] struct {
	// Options are the options every backend shares, meaning what queue.Options says, with
	// these differences: Key is required to consume, and to produce with Shards > 1;
	// Capacity caps XLEN (entries not yet acknowledged; with Shards > 1 each shard's at
	// Capacity/Shards, rounded up) and 0 means no cap; BatchSize is the most entries a consumer reads and
	// flushes at once, FlushInterval how long it keeps reading to fill a batch after its
	// oldest record was enqueued; Workers is the number of consumers in this process (with
	// Shards > 1: one for each shard it owns, Workers not read); Inline,
	// when nil, writes a producer's own record (PolicySync, stream full) with DB and Writer;
	// Worker and Spread are not read (a consumer group does not route by slot: each of
	// its consumers reads the next entries, whatever their slots).
	queue.Options[K, T]

	// Client reaches Redis: a *redis.Client, or a *redis.ClusterClient for Redis Cluster.
	// Required; the Queue never closes it. Turn go-redis's own retries off (MaxRetries -1);
	// on a cluster keep MaxRedirects at its default or above, so MOVED and ASK are followed.
	// See the package doc ("Redis Cluster").
	Client redis.UniversalClient
	// Stream is the stream key (required); see the package doc for the keys derived from it.
	Stream string
	// Shards spreads the queue over this many streams (default 1: the stream Stream itself),
	// each in a hash slot of its own: a record goes to the shard its Key hashes to, so the
	// records of one key stay in order on one shard. Each shard is read by one consumer at a
	// time, which holds its lease; see the package doc ("Shards"). Every process of a queue
	// must use the same Shards.
	Shards int
	// ShardLease is how long a consumer's hold on a shard lasts unless renewed (default 3s;
	// renewed every third of it): a shard whose consumer died is taken over within about
	// ShardLease and a third. Read with Shards > 1 only.
	ShardLease time.Duration
	// Group is the consumer group (default "hotspotkit").
	Group string
	// Consumer prefixes this process's consumer names (default host:pid); worker i is
	// Consumer+"-w<i>", the reclaimer Consumer+"-reclaim", and with Shards > 1 shard i's
	// reader Consumer+"-s<i>". With Shards > 1 only one Group may read the queue (the
	// shards' leases are the queue's, not the group's).
	Consumer string
	// Role: both (default), producer or consumer.
	Role Role
	// Fresh deletes the stream, its dead-letter stream and its counters before starting: the
	// process that sets a run up passes it, processes joining the run do not.
	Fresh bool

	// Codec stores records in entries. Required.
	Codec queue.Codec[T]

	// DB and Writer write a batch in one transaction, with the ids it applies; required to
	// consume, and to produce under PolicySync with a Capacity unless Inline is set. DB is a
	// package sqldb handle (sqldb.PgxPool for a pgx pool); the applied-ids table is written
	// in its dialect (PostgreSQL's, or MySQL's and MariaDB's: see "Applied ids").
	DB     sqldb.Beginner
	Writer queue.TxWriter[T]
	// AppliedTable is the table of applied entry ids (default "queue_applied_entries"; a
	// name, or schema.name), shared by every stream: a consuming New creates it when it is
	// missing (AppliedTableSQL). PruneInterval is how often a consuming process deletes the
	// ids of entries that can no longer be delivered (default 1m; negative: never, the ids
	// are kept). See the package doc.
	AppliedTable  string
	PruneInterval time.Duration

	// Block bounds one XREADGROUP wait (default 250ms; at least 1ms, since 0 is "forever").
	// It also bounds how long Pause and Close wait for a reading consumer.
	Block time.Duration
	// ReclaimIdle is how long an entry must sit unacknowledged in a consumer's pending list
	// before another consumer takes it over (default 30s). ReclaimInterval is how often this
	// process looks (default ReclaimIdle/2, between 10ms and 5s).
	ReclaimIdle     time.Duration
	ReclaimInterval time.Duration
	// MaxDeliveries: an entry delivered more often goes to the dead-letter stream (default 5).
	MaxDeliveries int
	// DeadLetterMaxLen bounds the dead-letter stream (default 10000; exact MAXLEN).
	DeadLetterMaxLen int64

	// Senders is the number of producer goroutines (default 4); SendBatch the most records one
	// of them sends in one script call (default 512), a group of records always whole (so a
	// call may pass it by the last group).
	Senders   int
	SendBatch int
}

// shared views the options every backend validates and defaults the same way.
func (o *Options[K, T]) shared() *core.Options[K, T, queue.FullPolicy, queue.Flusher[T]] {
	return (*core.Options[K, T, queue.FullPolicy, queue.Flusher[T]])(&o.Options)
}

func (o Options[K, T]) withDefaults() (Options[K, T], error) {
	errs := o.shared().Check()
	if o.Client == nil {
		errs = append(errs, errors.New("Client is required"))
	}
	if o.Stream == "" {
		errs = append(errs, errors.New("Stream is required"))
	}
	if o.Pipeline {
		errs = append(errs, errors.New("Pipeline is the in-memory queue's option, not this backend's"))
	}
	if o.Codec == nil {
		errs = append(errs, errors.New("Codec is required"))
	}
	if o.Role < RoleBoth || o.Role > RoleConsumer {
		errs = append(errs, fmt.Errorf("invalid Role %d", int(o.Role)))
	}
	if o.Role.consumes() && (o.Key == nil || o.DB == nil || o.Writer == nil) {
		errs = append(errs, errors.New("Key, DB and Writer are required to consume"))
	}
	if o.Shards > 1 && o.Key == nil {
		errs = append(errs, errors.New("Key is required with Shards > 1 (it picks a record's shard)"))
	}
	if o.Stream != "" && o.Shards >= 0 {
		if err := checkStreamName(o.Stream, o.Shards); err != nil {
			errs = append(errs, err)
		}
	}
	if o.Role.produces() && o.FullPolicy == queue.PolicySync && o.Capacity > 0 && o.Inline == nil && (o.DB == nil || o.Writer == nil) {
		errs = append(errs, errors.New("Inline, or DB and Writer, are required for PolicySync with a Capacity"))
	}
	if o.AppliedTable != "" {
		if _, err := tableParts(o.AppliedTable); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, core.NonNegative(
		core.Field{Name: "Block", Value: int64(o.Block)},
		core.Field{Name: "ReclaimIdle", Value: int64(o.ReclaimIdle)},
		core.Field{Name: "ReclaimInterval", Value: int64(o.ReclaimInterval)},
		core.Field{Name: "MaxDeliveries", Value: int64(o.MaxDeliveries)},
		core.Field{Name: "DeadLetterMaxLen", Value: o.DeadLetterMaxLen},
		core.Field{Name: "Senders", Value: int64(o.Senders)},
		core.Field{Name: "SendBatch", Value: int64(o.SendBatch)},
		core.Field{Name: "Shards", Value: int64(o.Shards)},
		core.Field{Name: "ShardLease", Value: int64(o.ShardLease)})...)
	if o.ShardLease > 0 && o.ShardLease < 30*time.Millisecond {
		errs = append(errs, fmt.Errorf("ShardLease must be at least 30ms (got %s)", o.ShardLease))
	}
	if o.Block > 0 && o.Block < time.Millisecond {
		errs = append(errs, fmt.Errorf("Block must be at least 1ms (got %s); go-redis reads BLOCK 0 as forever", o.Block))
	}
	if o.PruneInterval > 0 && o.PruneInterval < time.Millisecond {
		errs = append(errs, fmt.Errorf("PruneInterval must be at least 1ms (got %s), or negative for never", o.PruneInterval))
	}
	if o.ReclaimIdle > 0 && o.ReclaimIdle < time.Millisecond {
		errs = append(errs, fmt.Errorf("ReclaimIdle must be at least 1ms (got %s)", o.ReclaimIdle))
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("redisq: invalid options: %w", errors.Join(errs...))
	}
	o.shared().Defaults()
	o.Group = core.OrDefault(o.Group, DefaultGroup)
	if o.Consumer == "" {
		host, _ := os.Hostname()
		o.Consumer = host + ":" + strconv.Itoa(os.Getpid())
	}
	o.Block = core.OrDefault(o.Block, DefaultBlock)
	o.ReclaimIdle = core.OrDefault(o.ReclaimIdle, DefaultReclaimIdle)
	if o.ReclaimInterval == 0 {
		o.ReclaimInterval = min(max(o.ReclaimIdle/2, 10*time.Millisecond), 5*time.Second)
	}
	o.MaxDeliveries = core.OrDefault(o.MaxDeliveries, DefaultMaxDeliveries)
	o.DeadLetterMaxLen = core.OrDefault(o.DeadLetterMaxLen, DefaultDeadLetterMaxLen)
	o.Senders = core.OrDefault(o.Senders, DefaultSenders)
	o.SendBatch = core.OrDefault(o.SendBatch, DefaultSendBatch)
	o.AppliedTable = core.OrDefault(o.AppliedTable, DefaultAppliedTable)
	o.PruneInterval = core.OrDefault(o.PruneInterval, DefaultPruneInterval)
	o.Shards = core.OrDefault(o.Shards, 1)
	o.ShardLease = core.OrDefault(o.ShardLease, DefaultShardLease)
	return o, nil
}
