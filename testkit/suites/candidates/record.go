package candidates

import (
	"cmp"
	"fmt"
	"maps"
	"strconv"

	"github.com/jackc/pgx/v5/pgtype"
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
	request   int64 // the row's request_id is requestID(request)
	candidate int32
	retry     int32
}

func compareSlots(a, b slot) int {
	return cmp.Or(cmp.Compare(a.request, b.request), cmp.Compare(a.candidate, b.candidate), cmp.Compare(a.retry, b.retry))
}

func requestID(i int64) string { return "req-" + strconv.FormatInt(i, 10) }

// record is one write to a slot. A field that is not Valid is absent: the write does not
// know it and leaves what the row holds. extra is never modified once built (merge builds a
// new map), so records may share it.
type record struct {
	slot
	status                             status
	providerID, keyID, endpointID      pgtype.Text
	statusCode, latencyMs, firstByteMs pgtype.Int4
	errorType, errorMessage            pgtype.Text
	extra                              map[string]any
	createdAt, startedAt, finishedAt   pgtype.Timestamptz
}

func keyOf(r record) slot { return r.slot }

// merge folds newer, a later write to the same slot, into p: the status advances (advance),
// present fields replace absent or older ones, created_at keeps the first, and extra_data
// objects merge shallowly (newer keys win).
func merge(p *record, newer record) {
	p.status = advance(p.status, newer.status)
	fill(&p.providerID, newer.providerID)
	fill(&p.keyID, newer.keyID)
	fill(&p.endpointID, newer.endpointID)
	fill(&p.statusCode, newer.statusCode)
	fill(&p.latencyMs, newer.latencyMs)
	fill(&p.firstByteMs, newer.firstByteMs)
	fill(&p.errorType, newer.errorType)
	fill(&p.errorMessage, newer.errorMessage)
	fill(&p.startedAt, newer.startedAt)
	fill(&p.finishedAt, newer.finishedAt)
	if !p.createdAt.Valid {
		p.createdAt = newer.createdAt
	}
	p.extra = mergeExtra(p.extra, newer.extra)
}

// fill replaces *dst with v when v is present (a Valid value is never the zero value).
func fill[T pgtype.Text | pgtype.Int4 | pgtype.Timestamptz](dst *T, v T) {
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
