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
	writes := map[string]int64{}
	rows := map[string]int64{}
	var seen map[Key]bool
	if compact {
		seen = make(map[Key]bool, len(deltas))
	}
	for _, d := range deltas {
		t := d.Change.table.Name()
		writes[t]++
		if !compact || !seen[d.Key] {
			rows[t]++
			if compact {
				seen[d.Key] = true
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writes == nil {
		m.writes, m.rows = map[string]int64{}, map[string]int64{}
	}
	for t, n := range writes {
		m.writes[t] += n
		m.rows[t] += rows[t]
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
