package counters

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// Declaration is a counter-style suite said rather than written: which hot rows it seeds, what
// each request adds to them, and the step that makes a write count once. New makes the suite of
// it — Seed (with --slots), every mode (Modes), Persisted and an exact Verify.
type Declaration struct {
	// Info describes the suite; New fills what it leaves out: Modes and DefaultModes (Modes),
	// both queue backends, Slots, HotSets (without a HotSet), and a --queue-capacity default
	// that holds as many requests as a one-record suite's when a request makes several records.
	Info testkit.Info
	// Tables are the hot tables the deltas write (NewTable, or Describe at run time); New adds
	// those of request 0's deltas.
	Tables []*Table
	// SeedSQL creates the hot rows of --hot-keys sets: each statement runs with $1 = --hot-keys,
	// in order, in one transaction; the rows of slotted tables are then split into --slots
	// (SeedSlots), and every declared table's rows recorded as their openings (snapshot).
	SeedSQL []string
	// Request is what request i, of hot set h (HotSet), adds to the hot rows: its parts, in the
	// order they are written, each a list of deltas (fresh ones: the package stamps their
	// Order) that travels as one queue record keyed by RecordKey.
	Request func(i int64, h int) [][]Delta
	// HotSet (optional) picks the hot set of each request of run r: it returns, once per run,
	// a function of the request index that must give the same set for an index every time, in
	// every process. Nil: Config.HotSet, --hot-key-dist over --hot-keys (Info.HotSets).
	HotSet func(r *testkit.Run) func(i int64) int
	// RecordKey (optional) is the row part of request i (of hot set h) is queued by: records of
	// one key go to one queue worker in order and merge under compaction, so records of two
	// different parts must never share one. Nil: the part's first row, which must then depend
	// on the hot set alone (it is worked out once per run and hot set).
	RecordKey func(i int64, h, part int) Key
	// RecordKeys (optional) is RecordKey for every part of request i at once, for a declaration
	// whose keys cost a computation per request (a script's, evaluated once for all its parts).
	RecordKeys func(i int64, h int) []Key
	// Claim is the step that makes a write count once. In the writing transaction it records
	// every source of batch (a part of a request; one may repeat) and returns those no
	// transaction recorded before, each once, in batch order, with the statements it sent.
	// Only the deltas of those are applied. ClaimParts is one on the package's own table.
	Claim func(ctx context.Context, tx sqldb.Tx, batch []Source) (fresh []Source, statements int, err error)
	// ClaimAll (optional) is Claim's fast path for a compacted queue batch on PostgreSQL:
	// statements that record every source of batch, each affecting exactly Rows rows when
	// every source is fresh, as on every batch but a retried or redelivered one. The writer
	// sends them in one round trip with the batch's UPDATEs, behind a savepoint. When one
	// fails on a unique violation or affects fewer rows, it rolls back to the savepoint and
	// claims through Claim: so a repeat must fail them, never pass them.
	ClaimAll func(batch []Source) []Statement
	// ClaimTable is the table Claim writes a row per source to, and ClaimIndex the SQL
	// expression of a row's request index: Persisted finds the requests there.
	ClaimTable, ClaimIndex string
	// Unclaimed (optional) says run r wrote no claim: its requests ran a transaction of the
	// suite's own without one (a script's sync run as written). Persisted then has nothing per
	// request to find (testkit.ErrNothingToReconcile), and Verify checks that the claim table
	// holds no row. The rows are checked against the requests the load saw succeed: a suite
	// whose run had outcomes it could not know (testkit.Unresolved) does not ask Verify.
	Unclaimed func(r *testkit.Run) bool
	// Deliveries (optional) is how many times request i is delivered, as an at-least-once queue
	// would (1 when nil); every delivery after the first must change nothing.
	Deliveries func(i int64) int
	// Codec stores the records on a Redis stream (nil: JSON; RecordCodec is compact).
	Codec testkit.Codec[Record]
	// HottestRows (optional) adds to every verified run's figures each table's hottest row's
	// share of the applied requests' writes: for a workload that draws its rows itself
	// (a script's random_zipfian) rather than by the hot sets, whose share the report has.
	HottestRows bool
	// MySQL is what the declaration says in MySQL's SQL (MariaDB's too) where the fields
	// above, which are PostgreSQL's, do not hold there. Nil: the suite runs on PostgreSQL
	// only, and a run on MySQL is refused before it seeds, saying so.
	MySQL *DialectSQL
}

// DialectSQL is a declaration's SQL in a dialect other than PostgreSQL's: each field left
// empty is the Declaration's own, which must then hold in that dialect too (a PartClaim's
// Claim and ClaimIndex do: they pick their statements by the transaction's dialect). There
// is no ClaimAll: it is PostgreSQL's pipeline, and elsewhere the writer claims through Claim,
// whose fast path is one statement already.
type DialectSQL struct {
	// SeedSQL is Declaration.SeedSQL in the dialect ($1 = --hot-keys; on MySQL HotSetsMySQL
	// stands in for generate_series).
	SeedSQL []string
	// Claim is Declaration.Claim in the dialect.
	Claim func(ctx context.Context, tx sqldb.Tx, batch []Source) (fresh []Source, statements int, err error)
	// ClaimIndex is Declaration.ClaimIndex in the dialect.
	ClaimIndex string
}

// Source is one part of one request: what a claim records.
type Source struct {
	Request int64 // the request's index
	Hot     int   // its hot set
	Part    int   // which of its parts (Declaration.Request)
}

// Statement is one statement of a pipelined claim (Declaration.ClaimAll) and the rows it
// affects when every source of its batch is fresh.
type Statement struct {
	SQL  string
	Args []any
	Rows int64
}

// Record is a counter suite's queue record: one part of a request or, compacted, of several,
// for one slot of one hot row (Key: the part's first row, the queue's slot).
type Record struct {
	Key      Key
	Part     int
	Requests []int64
}

// Merge folds a newer record for the same slot into rec (the queue's compaction).
func (rec *Record) Merge(newer Record) { rec.Requests = append(rec.Requests, newer.Requests...) }

// Suite is a declared counter suite (New): a testkit.Suite and testkit.Reconciler. A suite that
// needs more (flags, seed rows, checks) embeds it and adds its own methods.
type Suite struct {
	d       Declaration
	info    testkit.Info
	parts   int
	tables  []*Table
	ordered bool // some table has an Assign column: a row's writes go to one worker, in order

	mu  sync.Mutex
	cur runState // what is made once per run: of the latest run asked for

	merges  merges           // the queue modes' writes per row UPDATE (Figures)
	hottest []testkit.Figure // Verify's, with HottestRows (Figures)
}

var (
	_ testkit.Suite      = (*Suite)(nil)
	_ testkit.Reconciler = (*Suite)(nil)
)

// New is the suite d declares. It panics when two parts of request 0 share their first row
// and no RecordKey tells them apart.
func New(d Declaration) *Suite {
	first := d.Request(0, 0)
	s := &Suite{d: d, info: d.Info, parts: len(first)}
	seen := map[*Table]bool{}
	firstRows := map[Key]bool{}
	addTable := func(t *Table) {
		if !seen[t] {
			seen[t] = true
			s.tables = append(s.tables, t)
			s.ordered = s.ordered || t.assigns
		}
	}
	for _, t := range d.Tables {
		addTable(t)
	}
	for p, part := range first {
		for _, delta := range part {
			addTable(delta.Change.table)
		}
		if d.RecordKey != nil || d.RecordKeys != nil {
			continue // parts are keyed by the declaration; one may write no hot row (an appended row)
		}
		if len(part) == 0 {
			panic(fmt.Sprintf("counters: %s: part %d of a request writes no hot row and no RecordKey keys it", d.Info.Name, p))
		}
		if firstRows[part[0].Key] {
			panic(fmt.Sprintf("counters: %s: part %d of a request starts at the row of an earlier part: records of two parts would merge (declare RecordKey)", d.Info.Name, p))
		}
		firstRows[part[0].Key] = true
	}
	if s.info.Modes == nil {
		s.info.Modes = Modes
	}
	if s.info.DefaultModes == nil {
		s.info.DefaultModes = s.info.Modes
	}
	if s.info.QueueBackends == nil {
		s.info.QueueBackends = []string{testkit.BackendMemory, testkit.BackendRedis}
	}
	if _, set := s.info.Defaults["queue-capacity"]; s.parts > 1 && !set {
		s.info.Defaults = map[string]string{"queue-capacity": strconv.Itoa(s.parts * testkit.DefaultQueueCapacity)}
	}
	s.info.Slots = true
	s.info.HotSets = d.HotSet == nil
	return s
}

// Info describes the suite.
func (s *Suite) Info() testkit.Info { return s.info }

// RequestID is request i's id in the tables ("req-i").
func RequestID(i int64) string { return "req-" + strconv.FormatInt(i, 10) }

// runSQL is what a run of the suite says in its database's dialect: the package's statements
// and the declaration's.
type runSQL struct {
	dialect
	seed       []string
	claim      func(ctx context.Context, tx sqldb.Tx, batch []Source) ([]Source, int, error)
	claimAll   func(batch []Source) []Statement // nil: no pipelined claim (MySQL's)
	claimIndex string
}

// statementsFor is the statements of run r's dialect, chosen once for each of the suite's
// steps: PostgreSQL's, or MySQL's where the declaration says its SQL there (Declaration.MySQL).
func (s *Suite) statementsFor(r *testkit.Run) (runSQL, error) {
	return s.statementsOf(r.Dialect())
}

// statementsOf is statementsFor of a run in dialect d.
func (s *Suite) statementsOf(d sqldb.Dialect) (runSQL, error) {
	sql, err := dialectOf(d)
	if err != nil {
		return runSQL{}, err
	}
	out := runSQL{dialect: sql, seed: s.d.SeedSQL, claim: s.d.Claim, claimAll: s.d.ClaimAll, claimIndex: s.d.ClaimIndex}
	if d == sqldb.Postgres {
		return out, nil
	}
	m := s.d.MySQL
	if m == nil {
		return runSQL{}, fmt.Errorf("counters: suite %s declares its SQL for PostgreSQL only (no Declaration.MySQL), and the run's database is %s",
			s.info.Name, d)
	}
	out.claimAll = nil
	if m.SeedSQL != nil {
		out.seed = m.SeedSQL
	}
	if m.Claim != nil {
		out.claim = m.Claim
	}
	if m.ClaimIndex != "" {
		out.claimIndex = m.ClaimIndex
	}
	return out, nil
}

// Seed creates the hot rows of --hot-keys sets and splits them into --slots.
func (s *Suite) Seed(ctx context.Context, r *testkit.Run) error {
	sql, err := s.statementsFor(r)
	if err != nil {
		return err
	}
	return s.seed(ctx, sql, r.Admin(), r.Config().HotKeys, r.Slots())
}

// seed is Seed in sql's statements on db, with hotKeys hot sets and slots slots.
func (s *Suite) seed(ctx context.Context, sql runSQL, db sqldb.DB, hotKeys, slots int) error {
	if err := sql.ready(ctx, db); err != nil {
		return err
	}
	return sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
		for _, stmt := range sql.seed {
			if _, err := tx.Exec(ctx, stmt, hotKeys); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		if err := seedSlots(ctx, sql, tx, slots, s.tables); err != nil {
			return err
		}
		return snapshot(ctx, sql, tx, s.tables)
	})
}

// Workload returns one request in r.Mode: its parts claimed and applied in its own
// transaction (sync), claimed with their deltas left to the outbox (Outbox), or enqueued as
// records a batch writer claims and applies, each delta as its own UPDATE or compacted (the
// async modes).
func (s *Suite) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	sql, err := s.statementsFor(r)
	if err != nil {
		return nil, err
	}
	s.merges.reset()
	s.mu.Lock()
	s.hottest = nil
	s.mu.Unlock()
	rc := s.recorder(r)
	switch r.Mode() {
	case testkit.Sync:
		write := s.Writer(r, false)
		return &testkit.Workload{Op: s.deliver(r.SyncTx(func(ctx context.Context, tx sqldb.Tx, i int64) error {
			_, err := write.WriteBatch(ctx, tx, rc.records(tx, i))
			return err
		}))}, nil
	case Outbox:
		return OutboxWorkload(ctx, r, s.tables, s.deliver(r.SyncTx(func(ctx context.Context, tx sqldb.Tx, i int64) error {
			return s.writeOutbox(ctx, tx, r, sql, rc.records(tx, i))
		})))
	case testkit.Async, testkit.AsyncCompact:
		return testkit.AsyncWorkload(ctx, r, testkit.AsyncSpec[Key, Record]{
			Records: func(i int64) []Record {
				recs := rc.records(nil, i)
				for range s.deliveries(i) - 1 {
					recs = append(recs, rc.records(nil, i)...)
				}
				return recs
			},
			Key:    func(rec Record) Key { return rec.Key },
			Worker: SlotsOf(r).Worker(),
			// Counters add up and Greatest, Least and FollowsNewest keep the extreme: unless
			// a column is last write wins, the order of a hot row's writes does not matter, so
			// an unslotted hot row's records go to every worker (slots are dealt out to
			// workers instead: they are rows of their own).
			Spread:  SlotsOf(r).N <= 1 && !s.ordered,
			Merge:   (*Record).Merge,
			Compare: CompareKeys,
			Writer:  func(compact bool) testkit.TxWriter[Record] { return s.Writer(r, compact) },
			Codec:   s.d.Codec,
		})
	}
	return nil, fmt.Errorf("mode %s not supported", r.Mode())
}

// unclaimed says run r wrote no claim (Declaration.Unclaimed).
func (s *Suite) unclaimed(r *testkit.Run) bool { return s.d.Unclaimed != nil && s.d.Unclaimed(r) }

func (s *Suite) deliveries(i int64) int {
	if s.d.Deliveries == nil {
		return 1
	}
	return s.d.Deliveries(i)
}

// deliver runs op once per delivery of the request.
func (s *Suite) deliver(op testkit.Op) testkit.Op {
	if s.d.Deliveries == nil {
		return op
	}
	return func(ctx context.Context, req *testkit.Request) error {
		for range s.deliveries(req.Index) {
			if err := op(ctx, req); err != nil {
				return err
			}
		}
		return nil
	}
}

// Records are request i's records, one per part, in the slot it writes in tx (nil where no
// session writes: a queue record; see Slots.InTx). Its recorder is made once per run, as a
// run's own requests make theirs (Workload): making it costs a Request per hot set.
func (s *Suite) Records(r *testkit.Run, tx sqldb.Tx, i int64) []Record {
	return s.recorder(r).records(tx, i)
}

// runState is what the suite makes once per run: the hot set of each request, and the
// recorder (made when first asked for).
type runState struct {
	run      *testkit.Run
	hotSet   func(int64) int
	recorder *recorder
}

// state is run r's runState, made anew when r is another run than the last; s.mu is held.
func (s *Suite) state(r *testkit.Run) *runState {
	if s.cur.run != r {
		s.cur = runState{run: r, hotSet: r.Config().HotSet}
		if s.d.HotSet != nil {
			s.cur.hotSet = s.d.HotSet(r)
		}
	}
	return &s.cur
}

// recorder makes a run's records: without a RecordKey, the rows the parts of a request of
// each hot set are keyed by depend on the set alone, so they are worked out once per run, and
// a request's records cost what the queue's record of a hand-written suite costs.
type recorder struct {
	keys       [][]Key // by hot set, by part (nil with a RecordKey)
	recordKey  func(i int64, h, part int) Key
	recordKeys func(i int64, h int) []Key
	hotSet     func(i int64) int
	parts      int
	slots      Slots
}

// recorder is run r's recorder, made once per run.
func (s *Suite) recorder(r *testkit.Run) recorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(r)
	if st.recorder == nil {
		rc := s.recorderOf(r.Config().HotKeys, st.hotSet, SlotsOf(r))
		st.recorder = &rc
	}
	return *st.recorder
}

// recorderOf is the recorder of a run with hotKeys hot sets, hotSet and slots.
func (s *Suite) recorderOf(hotKeys int, hotSet func(int64) int, slots Slots) recorder {
	rc := recorder{recordKey: s.d.RecordKey, recordKeys: s.d.RecordKeys, hotSet: hotSet, parts: s.parts, slots: slots}
	if rc.recordKey != nil || rc.recordKeys != nil {
		return rc
	}
	rc.keys = make([][]Key, hotKeys)
	for h := range rc.keys {
		for _, part := range s.d.Request(int64(h), h) {
			rc.keys[h] = append(rc.keys[h], part[0].Key)
		}
	}
	return rc
}

func (rc recorder) records(tx sqldb.Tx, i int64) []Record {
	slot := 0
	if rc.slots.N > 1 { // unslotted, every write is to slot 0: no request id to hash
		slot = rc.slots.For(tx, i, RequestID(i))
	}
	h := rc.hotSet(i)
	recs := make([]Record, rc.parts)
	var keys []Key
	if rc.recordKeys != nil {
		keys = rc.recordKeys(i, h)
	}
	for p := range recs {
		var k Key
		switch {
		case keys != nil:
			k = keys[p]
		case rc.recordKey != nil:
			k = rc.recordKey(i, h, p)
		default:
			k = rc.keys[h][p]
		}
		k.Slot = slot
		recs[p] = Record{Key: k, Part: p, Requests: []int64{i}}
	}
	return recs
}

// hotSet is the hot set of each request of run r (Declaration.HotSet), made once per run.
func (s *Suite) hotSet(r *testkit.Run) func(i int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state(r).hotSet
}

// parts are request i's parts, of hot set h, each delta stamped with its place in the
// request (Delta.Order).
func (s *Suite) request(i int64, h int) [][]Delta {
	parts := s.d.Request(i, h)
	pos := 0
	for _, part := range parts {
		for k := range part {
			part[k].Order = Stamp(i, pos)
			pos++
		}
	}
	if pos > maxPositions {
		panic(fmt.Sprintf("counters: request %d makes %d deltas (at most %d)", i, pos, maxPositions))
	}
	return parts
}

// stamped are request i's deltas (request), all parts together.
func (s *Suite) stamped(i int64, h int) []Delta {
	var out []Delta
	for _, part := range s.request(i, h) {
		out = append(out, part...)
	}
	return out
}

// Writer writes a batch of records in the queue's transaction (and a sync request's records in
// its own): it claims their sources and applies the deltas of the fresh ones, compacted (one
// UPDATE per table) or each as its own UPDATE, in order.
func (s *Suite) Writer(r *testkit.Run, compact bool) testkit.TxWriter[Record] {
	sql, err := s.statementsFor(r)
	if err != nil {
		return failedWriter{err}
	}
	return batchWriter{s: s, sql: sql, hotSet: s.hotSet(r), async: r.Mode().Async(), compact: compact}
}

// failedWriter is the writer of a run the suite has no statements for: it writes nothing
// (Workload refused the run before it started, saying why).
type failedWriter struct{ err error }

func (w failedWriter) WriteBatch(context.Context, sqldb.Tx, []Record) (int, error) { return 0, w.err }

// batchWriter is Writer's: the statements of its run's dialect, the run's hot sets, and
// whether the run is a queue mode's (whose merges Figures counts).
type batchWriter struct {
	s       *Suite
	sql     runSQL
	hotSet  func(int64) int
	async   bool
	compact bool
}

func (w batchWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, batch []Record) (int, error) {
	if w.compact && w.sql.claimAll != nil {
		if ops, ok, err := w.writePipelined(ctx, tx, batch); ok || err != nil {
			return ops, err
		}
	}
	deltas, ops, err := w.s.claim(ctx, tx, w.hotSet, w.sql.claim, batch)
	if err != nil {
		return ops, err
	}
	var n int
	if w.compact {
		n, err = w.sql.apply(ctx, tx, deltas)
	} else {
		n, err = w.sql.applyEach(ctx, tx, deltas)
	}
	if err == nil && w.async {
		w.s.merges.add(deltas, w.compact)
	}
	return ops + n, err
}

// claimSavepoint guards a pipelined claim (writePipelined).
const claimSavepoint = "counters_claim"

// writePipelined writes a compacted batch in one round trip, as if every source were fresh: a
// savepoint, the declaration's ClaimAll statements, then Apply's UPDATEs, sent together (the
// hot rows' locks are taken last, so they are held for the one round trip to COMMIT alone).
// When a claim statement fails on a unique violation or affects fewer rows than it must, a
// source was claimed before: it rolls back to the savepoint and returns !ok, and the caller
// claims through Claim. The savepoint is left for COMMIT to release.
func (w batchWriter) writePipelined(ctx context.Context, tx sqldb.Tx, batch []Record) (ops int, ok bool, err error) {
	ptx, err := sqldb.RequirePgx(tx)
	if err != nil {
		return 0, false, err
	}
	sources := sourcesOf(w.hotSet, batch)
	claims := w.sql.claimAll(sources)
	var b pgx.Batch
	b.Queue("SAVEPOINT " + claimSavepoint)
	for _, c := range claims {
		b.Queue(c.SQL, c.Args...)
	}
	deltas := w.s.deltas(batch, sources, nil)
	groups := queueApply(&b, deltas)
	ops = len(claims) + len(groups)
	br := ptx.SendBatch(ctx, &b)
	repeat, err := readClaims(br, claims)
	if err == nil && !repeat {
		err = readApply(br, groups)
	}
	if cerr := br.Close(); err == nil && !repeat {
		err = cerr
	}
	if err == nil && !repeat {
		w.s.merges.addMerged(deltas, groups)
	}
	if err != nil || !repeat {
		return ops, err == nil, err
	}
	if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT "+claimSavepoint); err != nil {
		return ops + 1, false, fmt.Errorf("after a repeated claim: %w", err)
	}
	return ops + 1, false, nil
}

// readClaims reads the results of a pipelined claim's savepoint and statements: repeat when
// one met a source claimed before.
func readClaims(br pgx.BatchResults, claims []Statement) (repeat bool, err error) {
	if _, err := br.Exec(); err != nil {
		return false, fmt.Errorf("claim savepoint: %w", err)
	}
	for _, c := range claims {
		tag, err := br.Exec()
		switch {
		case sqldb.IsUniqueViolation(err): // a source claimed before
			return true, nil
		case err != nil:
			return false, fmt.Errorf("claiming the batch: %w", err)
		case tag.RowsAffected() != c.Rows:
			return true, nil
		}
	}
	return false, nil
}

// WriteOutbox claims a request's records and leaves the deltas of the fresh ones to the outbox.
func (s *Suite) WriteOutbox(ctx context.Context, tx sqldb.Tx, r *testkit.Run, recs []Record) error {
	sql, err := s.statementsFor(r)
	if err != nil {
		return err
	}
	return s.writeOutbox(ctx, tx, r, sql, recs)
}

// writeOutbox is WriteOutbox in sql's statements.
func (s *Suite) writeOutbox(ctx context.Context, tx sqldb.Tx, r *testkit.Run, sql runSQL, recs []Record) error {
	deltas, _, err := s.claim(ctx, tx, s.hotSet(r), sql.claim, recs)
	if err != nil || len(deltas) == 0 {
		return err
	}
	return sql.insertOutbox(ctx, tx, deltas)
}

// sourcesOf are the sources of batch's records, in batch order, each of its request's hot set.
func sourcesOf(hotSet func(int64) int, batch []Record) []Source {
	sources := make([]Source, 0, len(batch))
	for _, rec := range batch {
		for _, i := range rec.Requests {
			sources = append(sources, Source{Request: i, Hot: hotSet(i), Part: rec.Part})
		}
	}
	return sources
}

// claim claims the sources of batch and returns the deltas of the fresh ones, each in its
// record's slot, in batch order, with the statements the claim sent.
func (s *Suite) claim(ctx context.Context, tx sqldb.Tx, hotSet func(int64) int,
	claim func(context.Context, sqldb.Tx, []Source) ([]Source, int, error), batch []Record) ([]Delta, int, error) {
	sources := sourcesOf(hotSet, batch)
	fresh, ops, err := claim(ctx, tx, sources)
	if err != nil {
		return nil, ops, err
	}
	var isNew map[Source]bool // nil when every source is fresh, as it normally is
	if len(fresh) < len(sources) {
		isNew = make(map[Source]bool, len(fresh))
		for _, src := range fresh {
			isNew[src] = true
		}
	}
	return s.deltas(batch, sources, isNew), ops, nil
}

// deltas are the deltas of batch's sources (sources, in batch order) in their records'
// slots: of those isNew holds, each once, or of every one when isNew is nil.
func (s *Suite) deltas(batch []Record, sources []Source, isNew map[Source]bool) []Delta {
	var deltas []Delta
	k := 0
	for _, rec := range batch {
		for range rec.Requests {
			src := sources[k]
			k++
			if isNew != nil {
				if !isNew[src] {
					continue
				}
				delete(isNew, src) // a source repeated in the batch is applied once
			}
			part := InSlot(s.request(src.Request, src.Hot)[src.Part], rec.Key.Slot)
			if deltas == nil {
				// Room for every source left at this part's size: a source has several deltas
				// (four in the usage-counter suite), and a slice sized for one a source grew
				// through several copies (BenchmarkDeltas: 2.95 MB a batch of 1,000, 1.25 MB
				// sized here).
				deltas = make([]Delta, 0, len(part)*(len(sources)-k+1))
			}
			deltas = append(deltas, part...)
		}
	}
	return deltas
}

// Persisted counts every request's claim rows: a request whose parts are all claimed once is
// persisted once (a partial one shows as persisted, and then as wrong counters).
func (s *Suite) Persisted(ctx context.Context, r *testkit.Run, n int64) ([]int32, error) {
	if s.unclaimed(r) {
		return nil, testkit.ErrNothingToReconcile
	}
	sql, err := s.statementsFor(r)
	if err != nil {
		return nil, err
	}
	rows, err := r.Admin().Query(ctx, `SELECT `+sql.claimIndex+`, count(*) FROM `+sql.quote(s.d.ClaimTable)+` GROUP BY 1`)
	if err != nil {
		return nil, err
	}
	counts := make([]int32, n)
	var i, claims int64
	err = sqldb.ForEachRow(rows, []any{&i, &claims}, func() error {
		if i < 0 || i >= n {
			return fmt.Errorf("%s row of unexpected request %d", s.d.ClaimTable, i)
		}
		counts[i] = int32((claims + int64(s.parts) - 1) / int64(s.parts))
		return nil
	})
	return counts, err
}
