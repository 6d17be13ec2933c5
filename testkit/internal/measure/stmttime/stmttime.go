// Package stmttime owns the client's view of the request path's statements: a pgx tracer on
// the load's pool that times every statement (and every batch and COPY) from the moment pgx
// sends it until its result is read, summed per SQL text. The engine sets those times beside
// the server's own for the same statements (pg_stat_statements) and beside the requests'
// latency, to say where a request's time went: waiting for a connection, inside PostgreSQL,
// between the two (the round trips, the driver, COMMIT's WAL flush, waiting for a CPU), or in
// neither (the request's own code, the Go scheduler, GC).
//
// It also tells the load which requests ran on a cold session: the first statement a
// connection runs (the tracer has no state for it yet, it is set on the pool from its first
// connection on) marks the request whose context it runs under (load.NoteColdSession). A
// liveness ping of the pool's is not a statement of the tracer's.
//
// It costs two clock readings and two atomic adds per statement, and nothing is allocated once
// a statement's text has been seen: a connection keeps the start of its statement in a state
// of its own (a connection runs one statement at a time), and its texts' counters by the
// texts' memory.
package stmttime

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// Tracer times statements per SQL text; set it as a pool's ConnConfig.Tracer. Its methods are
// pgx's tracer interfaces (query, batch, COPY).
type Tracer struct {
	stmts sync.Map // SQL text → *counter
}

// New returns an empty Tracer.
func New() *Tracer { return &Tracer{} }

type counter struct {
	calls, nanos, failed atomic.Int64
}

// connState is what a connection remembers between the start and the end of its statement,
// and the counters of the statement texts it ran, by the text's memory (counted): a request
// path sends the same few texts again and again, from the same strings, so the text is
// hashed once per connection instead of once per statement.
type connState struct {
	start   time.Time
	sql     string
	counted map[textRef]*counter
}

// textRef is a string's memory: the same for every use of one string value.
type textRef struct {
	p *byte
	n int
}

// maxCounted bounds a connection's counted texts: texts made afresh for each statement (a
// batch's name) each have memory of their own and are looked up by their text instead.
const maxCounted = 64

// stateKey is the connection state's key in pgconn.PgConn.CustomData.
const stateKey = "hotspotkit/stmttime"

var (
	_ pgx.QueryTracer    = (*Tracer)(nil)
	_ pgx.BatchTracer    = (*Tracer)(nil)
	_ pgx.CopyFromTracer = (*Tracer)(nil)
)

func (t *Tracer) begin(ctx context.Context, conn *pgx.Conn, sql string) context.Context {
	if conn == nil {
		return ctx
	}
	data := conn.PgConn().CustomData()
	st, _ := data[stateKey].(*connState)
	if st == nil { // the connection's first statement: a cold session's
		st = &connState{}
		data[stateKey] = st
		load.NoteColdSession(ctx)
	}
	st.start, st.sql = time.Now(), sql
	return ctx
}

func (t *Tracer) end(conn *pgx.Conn, err error) {
	if conn == nil {
		return
	}
	st, _ := conn.PgConn().CustomData()[stateKey].(*connState)
	if st == nil || st.start.IsZero() {
		return
	}
	d := time.Since(st.start)
	cn := t.counter(st)
	cn.calls.Add(1)
	cn.nanos.Add(int64(d))
	if err != nil {
		cn.failed.Add(1)
	}
	st.start = time.Time{}
}

// counter is the counter of st's statement text.
func (t *Tracer) counter(st *connState) *counter {
	ref := textRef{unsafe.StringData(st.sql), len(st.sql)}
	if c, ok := st.counted[ref]; ok {
		return c
	}
	c, ok := t.stmts.Load(st.sql)
	if !ok {
		c, _ = t.stmts.LoadOrStore(st.sql, new(counter))
	}
	if st.counted == nil {
		st.counted = make(map[textRef]*counter)
	}
	if len(st.counted) < maxCounted {
		st.counted[ref] = c.(*counter)
	}
	return c.(*counter)
}

// TraceQueryStart implements pgx.QueryTracer.
func (t *Tracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return t.begin(ctx, conn, data.SQL)
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *Tracer) TraceQueryEnd(_ context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	t.end(conn, data.Err)
}

// TraceBatchStart implements pgx.BatchTracer: a batch is timed whole, under its first
// statement's text with "batch of N: " before it.
func (t *Tracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	sql := "batch"
	if b := data.Batch; b != nil && len(b.QueuedQueries) > 0 {
		sql = "batch of " + strconv.Itoa(len(b.QueuedQueries)) + ": " + b.QueuedQueries[0].SQL
	}
	return t.begin(ctx, conn, sql)
}

// TraceBatchQuery implements pgx.BatchTracer (the batch is timed whole).
func (t *Tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd implements pgx.BatchTracer.
func (t *Tracer) TraceBatchEnd(_ context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	t.end(conn, data.Err)
}

// TraceCopyFromStart implements pgx.CopyFromTracer: a COPY is timed under "COPY table".
func (t *Tracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	return t.begin(ctx, conn, "COPY "+data.TableName.Sanitize())
}

// TraceCopyFromEnd implements pgx.CopyFromTracer.
func (t *Tracer) TraceCopyFromEnd(_ context.Context, conn *pgx.Conn, data pgx.TraceCopyFromEndData) {
	t.end(conn, data.Err)
}

// Timed is one statement's calls and the time the client spent on them.
type Timed struct {
	SQL    string
	Calls  int64
	Failed int64
	Total  time.Duration
}

// Totals lists every statement seen, by total time, largest first.
func (t *Tracer) Totals() []Timed {
	var out []Timed
	t.stmts.Range(func(k, v any) bool {
		c := v.(*counter)
		out = append(out, Timed{SQL: k.(string), Calls: c.calls.Load(), Failed: c.failed.Load(), Total: time.Duration(c.nanos.Load())})
		return true
	})
	slices.SortFunc(out, func(a, b Timed) int { return cmp.Compare(b.Total, a.Total) })
	return out
}

// Normalize is the form in which a statement's text is matched with pg_stat_statements':
// trimmed, with runs of white space as one space.
func Normalize(sql string) string { return strings.Join(strings.Fields(sql), " ") }
