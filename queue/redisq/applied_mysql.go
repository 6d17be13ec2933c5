package redisq

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// mysqlApplied is the applied-ids table on MySQL 8 and MariaDB, which have neither arrays to
// pass a batch's ids in one parameter nor RETURNING on an INSERT that skips duplicates (MySQL
// 8 has no RETURNING at all). An id is kept as its two numbers, the key (stream, ms, seq), so
// that pruning deletes a range of the key instead of parsing every id of a stream; beside it,
// recorded_by is a random number of the flush that recorded it.
//
// A batch's ids are recorded by one multi-row INSERT IGNORE, in id order, each row carrying
// the flush's number: its rows affected are the rows it inserted, so when they are the
// batch's, every id was new, and this is the one statement of a batch delivered for the first
// time. When fewer (a redelivery: some ids were there), one read of the batch's rows that
// carry the flush's number says which it inserted; the transaction sees its own rows, and the
// others' only once committed. An INSERT that meets an id another transaction inserted and
// has not committed waits for that one to end (and inserts it if it was rolled back), so an id
// is new to exactly one committed transaction. The INSERT skips duplicates instead of failing
// on them, so no statement is rolled back (InnoDB would keep the locks of the rows it took
// back, as gap locks), and every consumer inserts in id order. Batches of new ids take no gap
// lock and never wait for each other; two batches that share ids (a redelivery while the
// first consumer still writes) wait for each other, and may deadlock when their duplicates'
// shared gap locks meet the other's inserts: InnoDB rolls one back (1213) and its flush is
// tried again, finding the other's ids committed.
//
// The statements carry their values inline (the stream as a hex literal, the numbers as
// digits): their texts differ from batch to batch and would only fill the cache of
// rewritten placeholders (sqldb) if they had any.
type mysqlApplied struct {
	schema, table string // unquoted (schema "": the connection's database)
	quoted        string
}

func newMySQLApplied(parts []string) *mysqlApplied {
	m := &mysqlApplied{table: parts[len(parts)-1], quoted: sqldb.MySQL.QuoteIdent(parts...)}
	if len(parts) == 2 {
		m.schema = parts[0]
	}
	return m
}

func (m *mysqlApplied) name() string { return m.quoted }

// createSQL: VARBINARY compares the stream's bytes, as Redis does its keys.
func (m *mysqlApplied) createSQL() string {
	return `CREATE TABLE IF NOT EXISTS ` + m.quoted + ` (
    stream VARBINARY(` + strconv.Itoa(maxStreamBytes) + `) NOT NULL,
    ms     BIGINT UNSIGNED NOT NULL,
    seq    BIGINT UNSIGNED NOT NULL,
    recorded_by BIGINT UNSIGNED NOT NULL,
    PRIMARY KEY (stream, ms, seq)
) ENGINE=InnoDB`
}

func (m *mysqlApplied) exists(ctx context.Context, q sqldb.Querier) (bool, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM information_schema.tables
WHERE table_schema = COALESCE(NULLIF($1, ''), DATABASE()) AND table_name = $2`, m.schema, m.table).Scan(&n)
	return n > 0, err
}

// lockCreation takes no lock: CREATE TABLE holds the name's metadata lock, so of two at once
// one creates the table and the other waits and finds it. (It also commits the transaction
// it runs in.)
func (m *mysqlApplied) lockCreation(context.Context, sqldb.Tx) error { return nil }

// maxStreamBytes is the longest stream key the table's column holds.
const maxStreamBytes = 512

func (m *mysqlApplied) holds(stream string) error {
	if len(stream) > maxStreamBytes {
		return fmt.Errorf("redisq: the stream key %.40q… is %d bytes; the applied-ids table on MySQL holds keys of at most %d", stream, len(stream), maxStreamBytes)
	}
	return nil
}

// mysqlID is an entry id as the table keeps it, with the id's text as Redis gave it.
type mysqlID struct {
	streamID
	text string
}

// mysqlIDs parses ids and sorts them.
func mysqlIDs(ids []string) ([]mysqlID, error) {
	out := make([]mysqlID, len(ids))
	for i, s := range ids {
		id, err := parseStreamID(s)
		if err != nil {
			return nil, err
		}
		out[i] = mysqlID{id, s}
	}
	slices.SortFunc(out, func(a, b mysqlID) int {
		switch {
		case a.less(b.streamID):
			return -1
		case b.less(a.streamID):
			return 1
		}
		return 0
	})
	return out, nil
}

func (m *mysqlApplied) record(ctx context.Context, tx sqldb.Tx, stream string, ids []string) (map[string]bool, int, error) {
	keys, err := mysqlIDs(ids)
	if err != nil {
		return nil, 0, err
	}
	lit, by := streamLiteral(stream), strconv.FormatUint(rand.Uint64(), 10)
	var b strings.Builder
	b.Grow(len(m.quoted) + 60 + len(keys)*(len(lit)+len(by)+32))
	b.WriteString(`INSERT IGNORE INTO ` + m.quoted + ` (stream, ms, seq, recorded_by) VALUES `)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(" + lit + ",")
		writeKey(&b, k.streamID)
		b.WriteString("," + by + ")")
	}
	inserted, err := mysqlExec(ctx, tx, b.String())
	if err != nil {
		return nil, 1, err
	}
	fresh := make(map[string]bool, len(keys))
	if inserted == int64(len(keys)) {
		for _, k := range keys {
			fresh[k.text] = true
		}
		return fresh, 1, nil
	}
	mine, err := m.presentKeys(ctx, tx, lit, keys, ` AND recorded_by = `+by)
	if err != nil {
		return nil, 2, err
	}
	for _, k := range keys {
		if mine[k.streamID] {
			fresh[k.text] = true
		}
	}
	return fresh, 2, nil
}

// writeKey writes "ms,seq" for id.
func writeKey(b *strings.Builder, id streamID) {
	b.WriteString(strconv.FormatUint(id.ms, 10))
	b.WriteByte(',')
	b.WriteString(strconv.FormatUint(id.seq, 10))
}

// presentKeys reads which of keys of the stream (its literal) are in the table, of the rows
// that also meet and (a condition, "" or " AND …").
func (m *mysqlApplied) presentKeys(ctx context.Context, q sqldb.Querier, stream string, keys []mysqlID, and string) (map[streamID]bool, error) {
	var b strings.Builder
	b.Grow(len(m.quoted) + len(stream) + 60 + len(keys)*32)
	b.WriteString(`SELECT ms, seq FROM ` + m.quoted + ` WHERE stream = ` + stream + ` AND (ms, seq) IN (`)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		writeKey(&b, k.streamID)
		b.WriteByte(')')
	}
	b.WriteString(")" + and)
	there := map[streamID]bool{}
	var id streamID
	err := mysqlQuery(ctx, q, b.String(), []any{&id.ms, &id.seq}, func() { there[id] = true })
	return there, err
}

func (m *mysqlApplied) present(ctx context.Context, q sqldb.Querier, stream string, ids []string) ([]string, error) {
	keys, err := mysqlIDs(ids)
	if err != nil {
		return nil, err
	}
	there, err := m.presentKeys(ctx, q, streamLiteral(stream), keys, "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		if there[k.streamID] {
			out = append(out, k.text)
		}
	}
	return out, nil
}

// prune deletes the key range below bound: (ms < bound.ms) or (ms = bound.ms and seq <
// bound.seq), written so that the range optimizer reads it as a range of the key.
func (m *mysqlApplied) prune(ctx context.Context, tx sqldb.Tx, stream string, bound streamID) (int64, error) {
	ms, seq := strconv.FormatUint(bound.ms, 10), strconv.FormatUint(bound.seq, 10)
	return mysqlExec(ctx, tx, `DELETE FROM `+m.quoted+` WHERE stream = `+streamLiteral(stream)+
		` AND (ms < `+ms+` OR (ms = `+ms+` AND seq < `+seq+`))`)
}

// streamLiteral is stream as a MySQL hex literal: its bytes, whatever they are.
func streamLiteral(stream string) string { return "X'" + hex.EncodeToString([]byte(stream)) + "'" }

// mysqlExec runs a statement without placeholders on the database/sql handle under q when
// there is one (sqldb.AsSQL), past sqldb's cache of rewritten statements; on q otherwise.
func mysqlExec(ctx context.Context, q sqldb.Querier, query string) (int64, error) {
	s, ok := sqldb.AsSQL(q)
	if !ok {
		return q.Exec(ctx, query)
	}
	res, err := s.ExecContext(ctx, query)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// mysqlQuery is mysqlExec's query: it scans each row into dest and calls fn.
func mysqlQuery(ctx context.Context, q sqldb.Querier, query string, dest []any, fn func()) error {
	s, ok := sqldb.AsSQL(q)
	if !ok {
		rows, err := q.Query(ctx, query)
		if err != nil {
			return err
		}
		return sqldb.ForEachRow(rows, dest, func() error { fn(); return nil })
	}
	rows, err := s.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		fn()
	}
	return rows.Err()
}
