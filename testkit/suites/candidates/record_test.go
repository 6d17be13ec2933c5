package candidates

import (
	"reflect"
	"testing"
	"time"

	"database/sql"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestAdvance(t *testing.T) {
	all := []status{pending, streaming, success, failed, cancelled}
	for _, stored := range all {
		for _, incoming := range all {
			got := advance(stored, incoming)
			var want status
			switch {
			case incoming.terminal():
				want = incoming
			case stored.terminal():
				want = stored
			case stored == streaming && incoming == pending:
				want = streaming
			default:
				want = incoming
			}
			if got != want {
				t.Errorf("advance(%s, %s) = %s, want %s", stored, incoming, got, want)
			}
		}
	}
}

func TestMerge(t *testing.T) {
	s := slot{Request: 7}
	tests := []struct {
		name   string
		writes []record
		want   record
	}{
		{
			name:   "a late pending never overwrites success",
			writes: []record{{slot: s, Status: success}, {slot: s, Status: pending}},
			want:   record{slot: s, Status: success},
		},
		{
			name:   "a late streaming never overwrites failed",
			writes: []record{{slot: s, Status: failed}, {slot: s, Status: streaming}},
			want:   record{slot: s, Status: failed},
		},
		{
			name:   "streaming wins over pending, whichever comes first",
			writes: []record{{slot: s, Status: streaming}, {slot: s, Status: pending}},
			want:   record{slot: s, Status: streaming},
		},
		{
			name:   "pending then streaming",
			writes: []record{{slot: s, Status: pending}, {slot: s, Status: streaming}},
			want:   record{slot: s, Status: streaming},
		},
		{
			name:   "a later terminal status wins over an earlier one",
			writes: []record{{slot: s, Status: failed}, {slot: s, Status: cancelled}},
			want:   record{slot: s, Status: cancelled},
		},
		{
			name: "present fields replace absent and older ones; absent ones keep what is there",
			writes: []record{
				{slot: s, Status: pending, ProviderID: text("p0"), KeyID: text("k0"), StatusCode: int4(100)},
				{slot: s, Status: streaming, StartedAt: at(t0), FirstByteMs: int4(30)},
				{slot: s, Status: success, KeyID: text("k1"), StatusCode: int4(200), FinishedAt: at(t0.Add(time.Second))},
			},
			want: record{slot: s, Status: success, ProviderID: text("p0"), KeyID: text("k1"), StatusCode: int4(200),
				StartedAt: at(t0), FirstByteMs: int4(30), FinishedAt: at(t0.Add(time.Second))},
		},
		{
			name: "a present zero value is still present",
			writes: []record{
				{slot: s, Status: pending, LatencyMs: int4(5)},
				{slot: s, Status: success, LatencyMs: int4(0)},
			},
			want: record{slot: s, Status: success, LatencyMs: int4(0)},
		},
		{
			name: "created_at keeps the first",
			writes: []record{
				{slot: s, Status: pending, CreatedAt: at(t0)},
				{slot: s, Status: success, CreatedAt: at(t0.Add(time.Minute))},
			},
			want: record{slot: s, Status: success, CreatedAt: at(t0)},
		},
		{
			name: "created_at is taken when the first write lacks it",
			writes: []record{
				{slot: s, Status: streaming},
				{slot: s, Status: success, CreatedAt: at(t0)},
			},
			want: record{slot: s, Status: success, CreatedAt: at(t0)},
		},
		{
			name: "extra_data objects merge shallowly, newer keys win",
			writes: []record{
				{slot: s, Status: pending, Extra: map[string]any{"model": "a", "usage": map[string]any{"in": 1}}},
				{slot: s, Status: streaming},
				{slot: s, Status: success, Extra: map[string]any{"model": "b", "usage": map[string]any{"out": 2}, "tokens": 9}},
			},
			want: record{slot: s, Status: success,
				Extra: map[string]any{"model": "b", "usage": map[string]any{"out": 2}, "tokens": 9}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fold(tt.writes)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("merged\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestMergeLeavesTheMergedRecordsUntouched(t *testing.T) {
	s := slot{Request: 1}
	first := record{slot: s, Status: pending, Extra: map[string]any{"a": 1}}
	second := record{slot: s, Status: success, Extra: map[string]any{"b": 2}}
	merged := first
	merge(&merged, second)
	if len(first.Extra) != 1 || len(second.Extra) != 1 || len(merged.Extra) != 2 {
		t.Fatalf("extra maps shared or modified: first %v second %v merged %v", first.Extra, second.Extra, merged.Extra)
	}
}

// fold merges writes in order, as the queue does for one slot.
func fold(writes []record) record {
	acc := writes[0]
	for _, w := range writes[1:] {
		merge(&acc, w)
	}
	return acc
}

// Merging a request's writes per slot must give exactly the row the lifecycle says the slot
// ends as, at every persistence level that writes.
func TestWritesMergeIntoTheirRows(t *testing.T) {
	for _, level := range []string{PersistFull, PersistTerminal} {
		g := lifecycle{seed: 42, persistence: level, retryRate: 0.3, failureRate: 0.3}
		for i := int64(0); i < 2000; i++ {
			bySlot := map[slot][]record{}
			var order []slot
			for _, w := range g.writes(i) {
				if _, seen := bySlot[w.slot]; !seen {
					order = append(order, w.slot)
				}
				bySlot[w.slot] = append(bySlot[w.slot], w)
			}
			rows := g.rows(i)
			if len(order) != len(rows) {
				t.Fatalf("%s request %d: writes touch %d slots, rows %d", level, i, len(order), len(rows))
			}
			for k, s := range order {
				per := len(bySlot[s])
				if want := map[string]int{PersistFull: 3, PersistTerminal: 2}[level]; per != want {
					t.Fatalf("%s request %d slot %+v: %d writes, want %d", level, i, s, per, want)
				}
				if got := fold(bySlot[s]); !reflect.DeepEqual(got, rows[k]) {
					t.Fatalf("%s request %d slot %+v:\n merged %+v\n   row %+v", level, i, s, got, rows[k])
				}
			}
		}
	}
}

func TestLifecycleIsReproducibleAndHonoursTheRates(t *testing.T) {
	g := lifecycle{seed: 7, persistence: PersistFull, retryRate: 0.1, failureRate: 0.05}
	again := g
	const n = 20000
	var retried, failedReqs, cancelledReqs int
	for i := int64(0); i < n; i++ {
		if !reflect.DeepEqual(g.rows(i), again.rows(i)) || !reflect.DeepEqual(g.writes(i), again.writes(i)) {
			t.Fatalf("request %d differs between two generators with the same seed", i)
		}
		rows := g.rows(i)
		last := rows[len(rows)-1]
		if last.Candidate != g.lastCandidate(i) || !last.Status.terminal() {
			t.Fatalf("request %d: last row %+v, lastCandidate %d", i, last.slot, g.lastCandidate(i))
		}
		if len(rows) == 2 {
			retried++
			if rows[0].Status != failed || rows[1].slot != (slot{Request: i, Candidate: 1}) {
				t.Fatalf("request %d: retried rows %+v", i, rows)
			}
		}
		switch last.Status {
		case failed:
			failedReqs++
		case cancelled:
			cancelledReqs++
		}
	}
	within := func(name string, got int, want float64) {
		if d := float64(got) - want; d < -want*0.15 || d > want*0.15 {
			t.Errorf("%s: %d of %d, want about %.0f", name, got, n, want)
		}
	}
	within("retried", retried, 0.1*n)
	within("failed", failedReqs, 0.05*0.9*n)
	within("cancelled", cancelledReqs, 0.05*0.1*n)

	other := lifecycle{seed: 8, persistence: PersistFull, retryRate: 0.1, failureRate: 0.05}
	same := 0
	for i := int64(0); i < 1000; i++ {
		if reflect.DeepEqual(g.rows(i), other.rows(i)) {
			same++
		}
	}
	if same == 1000 {
		t.Error("another seed generates the same lifecycles")
	}
	if w := (lifecycle{seed: 7, persistence: PersistNone}).writes(3); w != nil {
		t.Errorf("persistence none writes %v", w)
	}
}

func TestLayersKeepSlotsApartAndInOrder(t *testing.T) {
	a, b, c := slot{Request: 1}, slot{Request: 2}, slot{Request: 2, Candidate: 1}
	rec := func(s slot, code int32) record { return record{slot: s, StatusCode: int4(code)} }
	batch := []record{rec(a, 1), rec(b, 1), rec(a, 2), rec(a, 3), rec(c, 1), rec(b, 2)}
	got := layers(batch)
	want := [][]record{
		{rec(a, 1), rec(b, 1), rec(c, 1)},
		{rec(a, 2), rec(b, 2)},
		{rec(a, 3)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("layers\n got %v\nwant %v", got, want)
	}
	if l := layers([]record{rec(a, 1), rec(b, 1)}); len(l) != 1 {
		t.Errorf("distinct slots split into %d layers", len(l))
	}
}

func TestFillTreatsOnlyInvalidAsAbsent(t *testing.T) {
	v := sql.NullInt32{Int32: 3, Valid: true}
	fill(&v, sql.NullInt32{})
	if v.Int32 != 3 || !v.Valid {
		t.Errorf("an absent value replaced a present one: %+v", v)
	}
	fill(&v, sql.NullInt32{Int32: 0, Valid: true})
	if v.Int32 != 0 || !v.Valid {
		t.Errorf("a present zero was ignored: %+v", v)
	}
}
