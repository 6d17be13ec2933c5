package redisq

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// shard is one of a queue's streams with the keys beside it (see the package doc, "Shards").
type shard struct {
	i    int
	keys keys
	adds chan *addReq // to this shard's senders

	// With Shards > 1: the consumer reading it while this process owns it (under
	// Queue.workersM), and until when its reclaimer takes over entries idle for ShardLease
	// instead of ReclaimIdle (µs since the Unix epoch), after this process took it over.
	reader    any // *consumer[K, T]
	fastUntil atomic.Int64
}

// shardOf returns the shard of a record whose key is k: the same in every process and
// version (FNV-1a of the key's text), so a key's records all go to one shard.
func (q *Queue[K, T]) shardOf(k K) *shard {
	if len(q.shards) == 1 {
		return q.shards[0]
	}
	var buf [24]byte
	var b []byte
	switch v := any(k).(type) {
	case string:
		return q.shards[fnv1a(v)%uint64(len(q.shards))]
	case int:
		b = strconv.AppendInt(buf[:0], int64(v), 10)
	case int64:
		b = strconv.AppendInt(buf[:0], v, 10)
	case int32:
		b = strconv.AppendInt(buf[:0], int64(v), 10)
	case uint64:
		b = strconv.AppendUint(buf[:0], v, 10)
	case uint32:
		b = strconv.AppendUint(buf[:0], uint64(v), 10)
	default:
		return q.shards[fnv1a(fmt.Sprint(v))%uint64(len(q.shards))]
	}
	return q.shards[fnv1a(string(b))%uint64(len(q.shards))]
}

func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// readerOf is the consumer reading sh, or nil (under workersM).
func (q *Queue[K, T]) readerOf(sh *shard) *consumer[K, T] {
	c, _ := sh.reader.(*consumer[K, T])
	return c
}

// balance is a consuming process's share of the shards (Shards > 1): every third of
// ShardLease it renews its heartbeat and its leases, gives back shards beyond its share
// (ceil(shards / live consumers)) and takes free ones up to it, starting a reader for each
// shard it takes. A shard whose lease could not be renewed is left at once (another consumer
// may hold it by now). When the consumers leave, it releases every lease and its heartbeat.
func (q *Queue[K, T]) balance() {
	defer q.wg.Done()
	owned := map[*shard]bool{}
	releasing := map[*shard]chan struct{}{}
	ttl := q.o.ShardLease.Milliseconds()
	first := int(fnv1a(q.member) % uint64(len(q.shards))) // consumers try the shards in different orders
	live := 1
	pass := func() {
		ctx, cancel := context.WithTimeout(q.life.Ctx(), q.o.ShardLease/3)
		defer cancel()
		if n, err := heartbeatScript.Run(ctx, q.rdb, []string{q.members}, q.member, ttl).Int(); err == nil {
			live = max(n, 1)
		}
		for sh, done := range releasing {
			if isClosed(done) {
				delete(releasing, sh)
			}
		}
		for sh := range owned {
			if n, err := leaseScript.Run(ctx, q.rdb, []string{sh.keys.lease}, q.member, ttl, "renew").Int(); err == nil && n == 0 {
				delete(owned, sh) // lost: someone else may read it now
				q.leave(sh)
			}
		}
		share := (len(q.shards) + live - 1) / live
		for sh := range owned {
			if len(owned) <= share {
				break
			}
			delete(owned, sh)
			releasing[sh] = q.giveBack(sh)
		}
		for j := range q.shards {
			if len(owned) >= share || q.stopping() {
				break
			}
			sh := q.shards[(first+j)%len(q.shards)]
			if owned[sh] || releasing[sh] != nil {
				continue
			}
			n, err := leaseScript.Run(ctx, q.rdb, []string{sh.keys.lease}, q.member, ttl, "take").Int()
			if err != nil || n == 0 {
				continue
			}
			owned[sh] = true
			// Entries its previous reader held are taken over once idle for ShardLease,
			// for as long as that reader could still have been reading.
			sh.fastUntil.Store(time.Now().Add(3 * q.o.ShardLease).UnixMicro())
			q.read(sh)
		}
	}
	pass()
	q.every(q.o.ShardLease/3, func() bool { pass(); return true })
	// The consumers leave (stopC) or were aborted: wait for the readers, then let go.
	q.workersM.Lock()
	readers := make([]*consumer[K, T], 0, len(owned))
	for sh := range owned {
		if c := q.readerOf(sh); c != nil {
			readers = append(readers, c)
		}
	}
	q.workersM.Unlock()
	for _, c := range readers {
		<-c.done
	}
	for _, done := range releasing {
		<-done
	}
	ctx, cancel := context.WithTimeout(context.Background(), q.o.ShardLease) // it expires by then anyway
	defer cancel()
	for sh := range owned {
		_ = releaseScript.Run(ctx, q.rdb, []string{sh.keys.lease}, q.member).Err()
	}
	_ = heartbeatScript.Run(ctx, q.rdb, []string{q.members}, q.member, 0).Err()
}

// read starts sh's reader.
func (q *Queue[K, T]) read(sh *shard) {
	q.workersM.Lock()
	defer q.workersM.Unlock()
	if !q.stopping() {
		q.startWorkerLocked(fmt.Sprintf("%s-s%d", q.o.Consumer, sh.i), sh)
	}
}

// leave tells sh's reader to stop after the batch in hand, and returns it (nil if none).
func (q *Queue[K, T]) leave(sh *shard) *consumer[K, T] {
	q.workersM.Lock()
	defer q.workersM.Unlock()
	c := q.readerOf(sh)
	sh.reader = nil
	if c != nil {
		c.leave()
	}
	return c
}

// giveBack stops sh's reader, waits until its batch is written and acknowledged, then
// releases sh's lease; the returned channel closes when that is done.
func (q *Queue[K, T]) giveBack(sh *shard) chan struct{} {
	done := make(chan struct{})
	c := q.leave(sh)
	go func() {
		defer close(done)
		if c != nil {
			<-c.done
		}
		ctx, cancel := context.WithTimeout(context.Background(), q.o.ShardLease) // it expires by then anyway
		defer cancel()
		_ = releaseScript.Run(ctx, q.rdb, []string{sh.keys.lease}, q.member).Err()
	}()
	return done
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
