package candidates

import (
	"cmp"
	"database/sql"
	"fmt"
	"maps"
	"strconv"
)

// status is a candidate's lifecycle state. The constants are in lifecycle order.
type status uint8

const (
	pending status = iota
	streaming
	success
	failed
	cancelled
)

var statusNames = [...]string{pending: "pending", streaming: "streaming", success: "success", failed: "failed", cancelled: "cancelled"}

func (s status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

func (s status) terminal() bool { return s >= success }

// advance is the status a slot holds once incoming meets stored: an incoming terminal status
// wins; otherwise a stored terminal status is kept, and streaming is kept against pending;
// otherwise incoming wins. The SQL guard (statusGuard) applies the same rule in the database.
func advance(stored, incoming status) status {
	switch {
	case incoming.terminal():
		return incoming
	case stored.terminal(), stored == streaming && incoming == pending:
		return stored
	}
	return incoming
}

// slot is the table's unique key. It holds the request index rather than the request_id text
// so that the queue hashes and compares it without allocating.
type slot struct {
	Request   int64 // the row's request_id is requestID(Request)
	Candidate int32
	Retry     int32
}

func compareSlots(a, b slot) int {
	return cmp.Or(cmp.Compare(a.Request, b.Request), cmp.Compare(a.Candidate, b.Candidate), cmp.Compare(a.Retry, b.Retry))
}

func requestID(i int64) string { return "req-" + strconv.FormatInt(i, 10) }

// record is one write to a slot. A field that is not Valid is absent: the write does not
// know it and leaves what the row holds. Its nullable fields are database/sql's, which both
// drivers take (PostgreSQL's statements send them as pgx's arrays: pgArgs). extra is never
// modified once built (merge builds a new map), so records may share it.
type record struct {
	slot
	Status                             status
	ProviderID, KeyID, EndpointID      sql.NullString
	StatusCode, LatencyMs, FirstByteMs sql.NullInt32
	ErrorType, ErrorMessage            sql.NullString
	Extra                              map[string]any
	CreatedAt, StartedAt, FinishedAt   sql.NullTime
}

func keyOf(r record) slot { return r.slot }

// merge folds newer, a later write to the same slot, into p: the status advances (advance),
// present fields replace absent or older ones, created_at keeps the first, and extra_data
// objects merge shallowly (newer keys win).
func merge(p *record, newer record) {
	p.Status = advance(p.Status, newer.Status)
	fill(&p.ProviderID, newer.ProviderID)
	fill(&p.KeyID, newer.KeyID)
	fill(&p.EndpointID, newer.EndpointID)
	fill(&p.StatusCode, newer.StatusCode)
	fill(&p.LatencyMs, newer.LatencyMs)
	fill(&p.FirstByteMs, newer.FirstByteMs)
	fill(&p.ErrorType, newer.ErrorType)
	fill(&p.ErrorMessage, newer.ErrorMessage)
	fill(&p.StartedAt, newer.StartedAt)
	fill(&p.FinishedAt, newer.FinishedAt)
	if !p.CreatedAt.Valid {
		p.CreatedAt = newer.CreatedAt
	}
	p.Extra = mergeExtra(p.Extra, newer.Extra)
}

// fill replaces *dst with v when v is present (a Valid value is never the zero value).
func fill[T sql.NullString | sql.NullInt32 | sql.NullTime](dst *T, v T) {
	var absent T
	if v != absent {
		*dst = v
	}
}

func mergeExtra(into, from map[string]any) map[string]any {
	switch {
	case len(from) == 0:
		return into
	case len(into) == 0:
		return from
	}
	out := maps.Clone(into)
	maps.Copy(out, from)
	return out
}
