package counters

import (
	"context"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// On is a declared suite's steps on a database of one dialect without a Run, for the tests
// of its statements there: HotKeys hot sets (request i's is i mod HotKeys), Slots slots
// (picked by a hash of the request id).
type On struct {
	s       *Suite
	sql     runSQL
	hotKeys int
	slots   int
}

// OnDialect is s's steps in dialect d.
func (s *Suite) OnDialect(d sqldb.Dialect, hotKeys, slots int) (On, error) {
	sql, err := s.statementsOf(d)
	return On{s: s, sql: sql, hotKeys: hotKeys, slots: slots}, err
}

func (o On) hotSet(i int64) int { return int(i % int64(o.hotKeys)) }

// Seed is Suite.Seed on db.
func (o On) Seed(ctx context.Context, db sqldb.DB) error {
	return o.s.seed(ctx, o.sql, db, o.hotKeys, o.slots)
}

// Records are request i's records (Suite.Records), written where no session picks a slot.
func (o On) Records(i int64) []Record {
	return o.s.recorderOf(o.hotKeys, o.hotSet, Slots{N: o.slots}).records(nil, i)
}

// Writer is Suite.Writer of a queue mode.
func (o On) Writer(compact bool) testkit.TxWriter[Record] {
	return batchWriter{s: o.s, sql: o.sql, hotSet: o.hotSet, async: true, compact: compact}
}

// Verify is Suite.Verify of a run in mode on conn.
func (o On) Verify(ctx context.Context, conn sqldb.Querier, mode testkit.Mode, res testkit.Result) ([]testkit.Check, error) {
	return o.s.verify(ctx, verification{sql: o.sql, conn: conn, checks: new(testkit.Checks), hotKeys: o.hotKeys, slots: o.slots,
		mode: mode, hotSet: o.hotSet}, res)
}
