package redisq

import (
	"fmt"
	"strconv"
	"strings"
)

// The keys of a queue (see the package doc, "Keys"). On Redis Cluster every script and
// multi-key command must stay in one hash slot, so every key a shard's scripts touch carries
// that shard's hash tag.

// clusterSlots is the number of hash slots of Redis Cluster.
const clusterSlots = 16384

// keys are one shard's: its stream and the keys that live beside it, all in one slot.
type keys struct {
	stream  string // the stream
	dlq     string // dead-letter stream
	stats   string // run-wide counters (a hash)
	replies string // the last reply of each acknowledging or adding caller (a hash)
	lease   string // which consumer owns the shard (Shards > 1)
}

// shardKeys derives a shard's keys from its stream key. A stream key without a hash tag is
// wrapped in one for the others ("s" → "{s}:dlq"), which hashes like the bare key: the
// stream keeps the name the caller gave it.
func shardKeys(stream string) keys {
	base := tagged(stream)
	return keys{stream: stream, dlq: base + ":dlq", stats: base + ":stats", replies: base + ":replies", lease: base + ":lease"}
}

// tagged is stream, wrapped in braces unless it has a hash tag: the base of the keys that
// must hash like it.
func tagged(stream string) string {
	if hashTag(stream) == "" {
		return "{" + stream + "}"
	}
	return stream
}

// all returns every key of the shard.
func (k keys) all() []string { return []string{k.stream, k.dlq, k.stats, k.replies, k.lease} }

// shardStreams names the streams of a queue of n shards on stream. One shard is the stream
// itself. Shard i of more is "{<stream>:shard<i>}", or "{<stream>:shard<i>.<j>}" for the
// smallest j that puts it in the i-th n-th of the hash slots: the shards spread over the slots
// evenly, so over a cluster's masters (each of which owns a range of slots unless someone
// moved them), and every process of a run derives the same names.
func shardStreams(stream string, n int) []string {
	if n <= 1 {
		return []string{stream}
	}
	out := make([]string, n)
	for i := range out {
		lo, hi := i*clusterSlots/n, (i+1)*clusterSlots/n
		tag := stream + ":shard" + strconv.Itoa(i)
		for j := 1; ; j++ {
			if s := slotOf(tag); s >= lo && s < hi {
				break
			}
			tag = stream + ":shard" + strconv.Itoa(i) + "." + strconv.Itoa(j)
		}
		out[i] = "{" + tag + "}"
	}
	return out
}

// checkStreamName refuses stream names whose derived keys would not share the stream's slot
// (a brace that opens no tag), and hash tags in a sharded queue's name, where each shard
// needs a tag of its own.
func checkStreamName(stream string, shards int) error {
	if shards > 1 && strings.ContainsAny(stream, "{}") {
		return fmt.Errorf("Stream %q: with Shards > 1 it must contain no braces (each shard takes a hash tag of its own)", stream)
	}
	for _, s := range shardStreams(stream, shards) {
		k := shardKeys(s)
		for _, d := range k.all() {
			if slotOf(d) != slotOf(k.stream) {
				return fmt.Errorf("Stream %q: its key %q would hash to another cluster slot; use a name without braces, or a hash tag {...}", stream, d)
			}
		}
	}
	return nil
}

// hashTag returns the part of key that Redis Cluster hashes when it is not the whole key:
// the text between the first '{' and the next '}', when not empty.
func hashTag(key string) string {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			return key[s+1 : s+1+e]
		}
	}
	return ""
}

// slotOf is the cluster hash slot of key: CRC16 (XMODEM) of its hash tag, or of the whole key.
func slotOf(key string) int {
	if t := hashTag(key); t != "" {
		key = t
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % clusterSlots
}
