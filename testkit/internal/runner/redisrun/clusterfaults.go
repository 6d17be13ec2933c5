package redisrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotCluster is the cluster faults' error for a Redis that is not a cluster this process
// started.
var ErrNotCluster = errors.New("redis-failover and redis-reshard need --queue-backend redis --redis cluster")

// Failover kills the master of the managed cluster that holds the most keys (the queue's
// streams) and returns once its replica is promoted and every node agrees again. Just
// before, as crash-redis does, it counts exactly what that master held: hold (the consumers
// paused) and CLIENT PAUSE WRITE on it, the entries of the run's streams there (stream names
// containing streamBase) counted, the replica given up to a second to catch up (its lag at
// the kill is reported), release, then SIGKILL: the commands then under way on it die with
// it. It says which master, what it held, and how long the cluster took to be ok.
func (t *Target) Failover(ctx context.Context, streamBase string, hold, release func()) (string, time.Duration, error) {
	cl := t.ManagedCluster()
	if cl == nil {
		return "", 0, ErrNotCluster
	}
	i, err := cl.BusiestMaster(ctx)
	if err != nil {
		return "", 0, err
	}
	held, lag := "an unknown number of", "unknown"
	if hold != nil {
		hold()
	}
	m := cl.Master(i)
	if err := m.Do(ctx, "CLIENT", "PAUSE", 10000, "WRITE").Err(); err == nil {
		if n, err := countEntries(ctx, m, streamBase); err == nil {
			held = fmt.Sprint(n)
		}
		if n, err := cl.ReplicaLag(ctx, i, time.Second); err == nil {
			lag = fmt.Sprintf("%d bytes", n)
		}
	}
	if release != nil {
		release()
	}
	r, err := cl.FailoverReport(ctx, i)
	if err != nil {
		return "", 0, err
	}
	return fmt.Sprintf("master %d (%s) SIGKILLed holding %s entries of the run's streams, its replica %s behind; replica %s promoted, cluster ok after %d ms; the killed node back as a replica after %d ms more (appendonly %s)",
		i, r.Killed, held, lag, r.Promoted, r.Down.Milliseconds(), r.Rejoined.Milliseconds(), t.persist), r.Down, nil
}

// countEntries is the number of entries of the streams on one node whose names contain base
// (dead letters left out).
func countEntries(ctx context.Context, c *redis.Client, base string) (int64, error) {
	var total int64
	iter := c.ScanType(ctx, 0, "*"+base+"*", 1000, "stream").Iterator()
	for iter.Next(ctx) {
		if strings.HasSuffix(iter.Val(), ":dlq") {
			continue
		}
		n, err := c.XLen(ctx, iter.Val()).Result()
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, iter.Err()
}

// Reshard moves every slot holding a key of the master of the managed cluster with the most
// keys to the next master, live (clients redirected by ASK, then MOVED), and says which, how
// many slots and keys, and how long it took.
func (t *Target) Reshard(ctx context.Context) (string, time.Duration, error) {
	cl := t.ManagedCluster()
	if cl == nil {
		return "", 0, ErrNotCluster
	}
	from, err := cl.BusiestMaster(ctx)
	if err != nil {
		return "", 0, err
	}
	to := (from + 1) % cl.Masters()
	r, err := cl.ReshardKeyed(ctx, from, to)
	if err != nil {
		return "", 0, err
	}
	return fmt.Sprintf("%d slots (%d–%d) holding %d keys moved live from master %d (%s) to master %d (%s) in %d ms",
		r.Slots, r.First, r.Last, r.Keys, from, r.From, to, r.To, r.Took.Milliseconds()), r.Took, nil
}
