package counters

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkDeltas builds the deltas of a flush batch of 1,000 requests (compacted into 10
// records of 100), each request one part of four deltas shaped as the usage-counter suite's
// are — 4, 1, 6 and 1 values on four tables keyed by text, built as that suite builds them (a
// Part) — (B/op is the flush path's allocation per batch).
func BenchmarkDeltas(b *testing.B) {
	table := func(name string, cols ...Column) *Table {
		return MustTable(TableSpec{Name: name, Key: []Column{{Name: "id", Type: "text"}}, Slotted: true, Columns: cols})
	}
	add := func(name string) Column { return Column{Name: name, Type: "bigint", Op: Add} }
	usage := table("a", add("r"), add("t"), Column{Name: "c", Type: "numeric", Op: Add}, Column{Name: "at", Type: "timestamptz", Op: Greatest}).
		MustChange("r", "t", "c", "at")
	model := table("b", add("r")).MustChange("r")
	pkey := table("c", add("r"), add("s"), add("f"), add("t"), Column{Name: "c", Type: "numeric", Op: Add}, add("ms")).
		MustChange("r", "s", "f", "t", "c", "ms")
	monthly := table("d", Column{Name: "c", Type: "numeric", Op: Add}).MustChange("c")
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(Declaration{Request: func(i int64, h int) [][]Delta {
		target := strconv.Itoa(h)
		one, tokens, cost := Int(1), Int(30), Amount(100_000)
		p := NewPart(4, 12)
		p.Add(usage, usage.Table().Row(Text(target)), one, tokens, cost, Time(epoch.Add(time.Duration(i)*time.Millisecond)))
		p.Add(model, model.Table().Row(Text(target)), one)
		p.Add(pkey, pkey.Table().Row(Text(target)), one, one, Int(0), tokens, cost, Int(50+i%100))
		p.Add(monthly, monthly.Table().Row(Text(target)), cost)
		return [][]Delta{p.Deltas()}
	}})
	batch := make([]Record, 10)
	var sources []Source
	for r := range batch {
		batch[r].Key = Key{Table: "a", Row: "0", Slot: r}
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
