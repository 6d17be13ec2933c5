package counters

import (
	"fmt"
	"testing"
)

// BenchmarkDeltas builds the deltas of a flush batch of 1,000 requests (compacted into 10
// records of 100), each request one part of four deltas, as the usage-counter suite's are
// (B/op is the flush path's allocation per batch).
func BenchmarkDeltas(b *testing.B) {
	s := New(Declaration{Request: func(i int64, h int) [][]Delta {
		target := fmt.Sprint(h)
		return [][]Delta{{
			{Key: Key{Kind: APIKeyUsage, Target: target}, Requests: 1, Tokens: 10},
			{Key: Key{Kind: ModelUsage, Target: target}, Requests: 1},
			{Key: Key{Kind: ProviderKeyUsage, Target: target}, Requests: 1, Successes: 1},
			{Key: Key{Kind: ProviderMonthly, Target: target}, Requests: 1},
		}}
	}})
	batch := make([]Record, 10)
	var sources []Source
	for r := range batch {
		batch[r].Key = Key{Kind: APIKeyUsage, Target: "0", Slot: r}
		for i := range int64(100) {
			req := int64(r)*100 + i
			batch[r].Requests = append(batch[r].Requests, req)
			sources = append(sources, Source{Request: req})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if d := s.deltas(batch, sources, nil); len(d) != 4*len(sources) {
			b.Fatalf("%d deltas of %d sources", len(d), len(sources))
		}
	}
}
