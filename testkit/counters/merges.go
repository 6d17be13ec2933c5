package counters

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// merges counts, per table, the writes the queue modes' batches applied and the row UPDATEs
// they took: how much compaction merged a table's writes (async-compact merges every write to
// a row in a batch into one UPDATE; async writes each on its own). A batch written again after
// a failed COMMIT counts again.
type merges struct {
	mu     sync.Mutex
	writes map[string]int64
	rows   map[string]int64
}

// reset starts a run's counts.
func (m *merges) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes, m.rows = map[string]int64{}, map[string]int64{}
}

// add counts a batch's deltas, merged per row (compact) or each its own UPDATE.
func (m *merges) add(deltas []Delta, compact bool) {
	var rows []tableCount // nil: one UPDATE a delta
	if compact {
		seen := map[Key]bool{} // as many as the batch's rows: a compacted batch's are few
		for i := range deltas {
			if d := &deltas[i]; !seen[d.Key] {
				seen[d.Key] = true
				rows = countIn(rows, d.Change.table, 1)
			}
		}
	}
	m.count(deltas, rows)
}

// addMerged counts a compacted batch's deltas by the UPDATEs queueApply made of them: groups
// of the deltas merged per row, one row each.
func (m *merges) addMerged(deltas []Delta, groups [][]Delta) {
	var rows []tableCount
	for _, g := range groups {
		rows = countIn(rows, g[0].Change.table, int64(len(g)))
	}
	m.count(deltas, rows)
}

// tableCount is a count of one table's.
type tableCount struct {
	t *Table
	n int64
}

// countIn adds n to t's count in counts: a short list, as a batch writes a few tables.
func countIn(counts []tableCount, t *Table, n int64) []tableCount {
	for k := range counts {
		if counts[k].t == t {
			counts[k].n += n
			return counts
		}
	}
	return append(counts, tableCount{t, n})
}

// count adds deltas to the writes by table and rows (nil: as many as the writes) to the row
// UPDATEs.
func (m *merges) count(deltas []Delta, rows []tableCount) {
	var writes []tableCount
	for i := range deltas {
		writes = countIn(writes, deltas[i].Change.table, 1)
	}
	if rows == nil {
		rows = writes
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writes == nil {
		m.writes, m.rows = map[string]int64{}, map[string]int64{}
	}
	for _, w := range writes {
		m.writes[w.t.Name()] += w.n
	}
	for _, r := range rows {
		m.rows[r.t.Name()] += r.n
	}
}

// Figures are the run's writes merged per row UPDATE, by table, in the queue modes
// (testkit.FigureReporter): "writes per UPDATE: api_keys" 512 says a batch's 512 writes to
// api_keys went out as one UPDATE of its row; with Declaration.HottestRows, first each
// table's hottest row's share of the writes, in every mode.
func (s *Suite) Figures(_ context.Context, r *testkit.Run) ([]testkit.Figure, error) {
	s.mu.Lock()
	out := slices.Clone(s.hottest)
	s.mu.Unlock()
	if !r.Mode().Async() {
		return out, nil
	}
	s.merges.mu.Lock()
	defer s.merges.mu.Unlock()
	tables := make([]string, 0, len(s.merges.writes))
	for t := range s.merges.writes {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		if rows := s.merges.rows[t]; rows > 0 {
			out = append(out, testkit.Figure{Name: fmt.Sprintf("writes per UPDATE: %s", t),
				Value: units.Round(float64(s.merges.writes[t])/float64(rows), 3), Unit: "writes"})
		}
	}
	return out, nil
}
