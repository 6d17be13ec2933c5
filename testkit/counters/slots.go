package counters

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// Slots is how a run splits each hot logical row (--slots, --slot-pick): into N physical rows,
// slots 1..N, each write adding to one of them and each read summing them (the *_totals views
// of package schema). N ≤ 1 leaves the rows unslotted (slot 0), today's single hot row.
type Slots struct {
	N    int
	Pick string // testkit.SlotPickHash (""), SlotPickRandom, SlotPickRoundRobin or SlotPickSession
}

// SlotsOf is run r's slot layout.
func SlotsOf(r *testkit.Run) Slots {
	return Slots{N: r.Slots(), Pick: r.Config().SlotPick}
}

// Of is the slot request index (whose id is requestID) writes to: 0 when unslotted, else 1..N —
// from an FNV-1a hash of the request id (the same slot on every run and retry), drawn at
// random, or the index modulo N (round-robin: consecutive requests, which are the ones in flight
// together, spread evenly; also SlotPickSession's pick where no session writes: see InTx).
func (s Slots) Of(index int64, requestID string) int {
	if s.N <= 1 {
		return 0
	}
	switch s.Pick {
	case testkit.SlotPickRandom:
		return 1 + rand.IntN(s.N)
	case testkit.SlotPickRoundRobin, testkit.SlotPickSession:
		return 1 + int(index%int64(s.N))
	}
	h := fnv.New32a()
	h.Write([]byte(requestID))
	return 1 + int(h.Sum32()%uint32(s.N))
}

// InTx is the slot a request writing in tx picks, given the slot Of picked for it: with
// SlotPickSession the seat of tx's connection in the load pool modulo N (so the pool's
// sessions divide evenly over the slots and at most ceil(sessions/N) of them ever meet on one
// physical row), else slot — also with tx nil, where no session writes (a queue record, a
// verification's expected row). A retry on another connection may write another slot: a total
// is the sum over the slots, whichever took the write.
func (s Slots) InTx(tx sqldb.Tx, slot int) int {
	if s.N <= 1 || s.Pick != testkit.SlotPickSession || tx == nil {
		return slot
	}
	if seat := database.Seat(tx); seat >= 0 {
		return 1 + seat%s.N
	}
	return slot
}

// For is the slot request index (whose id is requestID) writes to in tx: Of, then InTx (tx
// nil where no session writes it).
func (s Slots) For(tx sqldb.Tx, index int64, requestID string) int {
	return s.InTx(tx, s.Of(index, requestID))
}

// InSlot sets slot on every delta of a slotted table and returns them (the deltas of other
// tables stay on their one row, slot 0).
func InSlot(deltas []Delta, slot int) []Delta {
	for i := range deltas {
		if deltas[i].Change.table.Slotted() {
			deltas[i].Slot = slot
		}
	}
	return deltas
}

// SeedSlots splits every seeded row of the slotted tables into n slots: the seeded row becomes
// slot 1 and slots 2..n are added, copying the table's SlotCopies and leaving every other
// column at its default (so a seeded balance stays on slot 1). A suite calls it at the end of
// its Seed (a declared one does); with n ≤ 1 it does nothing.
func SeedSlots(ctx context.Context, conn sqldb.Querier, n int, tables ...*Table) error {
	return seedSlots(ctx, dialectFor(conn), conn, n, tables)
}

// seedSlots is SeedSlots in sql's statements.
func seedSlots(ctx context.Context, sql dialect, conn sqldb.Querier, n int, tables []*Table) error {
	if n <= 1 {
		return nil
	}
	for _, t := range tables {
		if t.Slotted() {
			if err := sql.seedSlots(ctx, conn, n, t); err != nil {
				return fmt.Errorf("slotting %s: %w", t.Name(), err)
			}
		}
	}
	return nil
}

// seedSlotsPostgres splits t's seeded rows into n slots on PostgreSQL.
func seedSlotsPostgres(ctx context.Context, conn sqldb.Querier, n int, t *Table) error {
	table := ident(t.Name())
	list := strings.Join(slotColumns(t, ident), ", ")
	if _, err := conn.Exec(ctx, `UPDATE `+table+` SET slot = 1 WHERE slot = 0`); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, `INSERT INTO `+table+` (`+list+`, slot)
		SELECT `+list+`, s FROM `+table+`, generate_series(2, $1::int) s WHERE slot = 1`, n)
	return err
}

// slotColumns are the columns a new slot of t copies (its key and its SlotCopies), quoted.
func slotColumns(t *Table, quote func(string) string) []string {
	var cols []string
	for _, k := range t.spec.Key {
		cols = append(cols, quote(k.Name))
	}
	for _, c := range t.spec.SlotCopies {
		cols = append(cols, quote(c))
	}
	return cols
}

// Worker is the async queue's worker choice for a run's slots (testkit.AsyncSpec.Worker): the
// slots of one hot row go to consecutive workers, from a hash of the row, so that a burst on
// the row drains through min(N, workers) writers. Nil when unslotted: the queue's own hash.
func (s Slots) Worker() func(k Key, workers int) int {
	if s.N <= 1 {
		return nil
	}
	return func(k Key, workers int) int {
		h := fnv.New32a()
		h.Write([]byte(k.Table))
		h.Write([]byte{0})
		h.Write([]byte(k.Row))
		return int((uint64(h.Sum32()) + uint64(k.Slot)) % uint64(workers))
	}
}
