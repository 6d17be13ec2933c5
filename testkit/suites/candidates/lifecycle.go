package candidates

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Persistence levels (--persistence): which of a candidate's states are written.
const (
	// PersistFull writes every state: pending, streaming, terminal (three writes per candidate).
	PersistFull = "full"
	// PersistTerminal writes the dispatched record (pending) and the terminal one, which then
	// also carries what the streaming write would have (two writes per candidate).
	PersistTerminal = "terminal"
	// PersistNone writes nothing: the run measures the harness.
	PersistNone = "none"
)

// cancelShare is the share of failing requests that end cancelled (the client went away)
// rather than failed.
const cancelShare = 0.1

// lifecycle generates every request's candidates and writes. Each decision about request i
// is a pure function of the seed and i (a cheap hash), so workers need no shared state and
// Verify recomputes exactly what each request wrote.
type lifecycle struct {
	seed        uint64
	persistence string
	retryRate   float64
	failureRate float64
}

// Independent streams of draws per request.
const (
	drawRetry uint64 = iota + 1
	drawOutcome
	drawTiming
)

// draw returns request i's value in stream salt: 64 bits from splitmix64's finaliser.
func (g lifecycle) draw(i int64, salt uint64) uint64 {
	x := (g.seed ^ salt*0xd1b54a32d192ed03) + uint64(i)*0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// chance maps a draw to [0, 1).
func chance(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// epoch anchors the generated timestamps so that they are deterministic per request.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// candidate is one slot's whole story, from which both its writes and the row it must end as
// are derived.
type candidate struct {
	slot
	outcome                 status // terminal
	provider, key, endpoint string
	createdAt               time.Time
	startedAt               time.Time
	firstByteMs, latencyMs  int32
	statusCode              int32
	errorType, errorMessage string
	outputTokens            int
	retryable               bool
}

// candidates returns request i's slots in dispatch order. A retried request first tries
// candidate 0, which fails mid-stream, then goes to the next candidate (candidate_index 1,
// retry_index 0: another provider, not the same one again); the last candidate ends with the
// request's outcome.
func (g lifecycle) candidates(i int64) []candidate {
	outcome := success
	if u := chance(g.draw(i, drawOutcome)); u < g.failureRate*cancelShare {
		outcome = cancelled
	} else if u < g.failureRate {
		outcome = failed
	}
	t := g.draw(i, drawTiming)
	created := epoch.Add(time.Duration(i) * time.Millisecond)
	if !g.retried(i) {
		return []candidate{newCandidate(slot{Request: i}, outcome, false, created, t)}
	}
	first := newCandidate(slot{Request: i}, failed, true, created, t)
	next := newCandidate(slot{Request: i, Candidate: 1}, outcome, false, first.finishedAt().Add(time.Millisecond), t>>20)
	return []candidate{first, next}
}

func (g lifecycle) retried(i int64) bool { return chance(g.draw(i, drawRetry)) < g.retryRate }

// lastCandidate is the candidate_index of request i's final slot.
func (g lifecycle) lastCandidate(i int64) int32 {
	if g.retried(i) {
		return 1
	}
	return 0
}

func newCandidate(s slot, outcome status, retryable bool, created time.Time, t uint64) candidate {
	c := candidate{
		slot:        s,
		outcome:     outcome,
		provider:    fmt.Sprintf("provider-%d", s.Candidate),
		key:         fmt.Sprintf("pkey-%d-%d", s.Candidate, t%8),
		endpoint:    fmt.Sprintf("endpoint-%d", s.Candidate),
		createdAt:   created,
		startedAt:   created.Add(2 * time.Millisecond),
		firstByteMs: int32(20 + (t>>3)%180),
		retryable:   retryable,
	}
	c.latencyMs = c.firstByteMs + int32(50+(t>>11)%950)
	switch outcome {
	case success:
		c.statusCode, c.outputTokens = 200, int(10+(t>>21)%500)
	case failed:
		c.statusCode, c.errorType = 502, "upstream_error"
		c.errorMessage = "upstream stream broke after the first byte"
		if !retryable {
			c.statusCode, c.errorMessage = 500, "upstream returned 500"
		}
	case cancelled:
		c.statusCode, c.errorType, c.errorMessage = 499, "client_cancelled", "client closed the connection"
	}
	return c
}

func (c candidate) finishedAt() time.Time {
	return c.startedAt.Add(time.Duration(c.latencyMs) * time.Millisecond)
}

// The extra_data each write contributes; the row ends with their shallow merge.
func (c candidate) dispatchedExtra() map[string]any {
	return map[string]any{"model": "gpt-5", "attempt": c.Candidate + 1}
}

func (c candidate) streamingExtra() map[string]any { return map[string]any{"stream": true} }

func (c candidate) terminalExtra() map[string]any {
	if c.outcome == success {
		return map[string]any{"output_tokens": c.outputTokens}
	}
	return map[string]any{"retryable": c.retryable}
}

// dispatched is the first write: the slot exists, nothing has been received.
func (c candidate) dispatched() record {
	return record{slot: c.slot, Status: pending, ProviderID: text(c.provider), KeyID: text(c.key),
		EndpointID: text(c.endpoint), CreatedAt: at(c.createdAt), Extra: c.dispatchedExtra()}
}

// streamed is the write at the first byte.
func (c candidate) streamed() record {
	return record{slot: c.slot, Status: streaming, CreatedAt: at(c.createdAt), StartedAt: at(c.startedAt),
		FirstByteMs: int4(c.firstByteMs), Extra: c.streamingExtra()}
}

// finished is the terminal write; without a streaming write before it (withStream) it also
// carries what that write would have.
func (c candidate) finished(withStream bool) record {
	r := record{slot: c.slot, Status: c.outcome, CreatedAt: at(c.createdAt), StatusCode: int4(c.statusCode),
		LatencyMs: int4(c.latencyMs), FinishedAt: at(c.finishedAt()), Extra: c.terminalExtra()}
	if c.errorType != "" {
		r.ErrorType, r.ErrorMessage = text(c.errorType), text(c.errorMessage)
	}
	if withStream {
		r.StartedAt, r.FirstByteMs = at(c.startedAt), int4(c.firstByteMs)
		r.Extra = mergeExtra(c.streamingExtra(), r.Extra)
	}
	return r
}

// row is what the slot must finally hold, built from the story directly (not by merging the
// writes), so that verification does not rest on merge.
func (c candidate) row() record {
	r := record{slot: c.slot, Status: c.outcome, ProviderID: text(c.provider), KeyID: text(c.key),
		EndpointID: text(c.endpoint), StatusCode: int4(c.statusCode), LatencyMs: int4(c.latencyMs),
		FirstByteMs: int4(c.firstByteMs), CreatedAt: at(c.createdAt), StartedAt: at(c.startedAt),
		FinishedAt: at(c.finishedAt()),
		Extra:      map[string]any{"model": "gpt-5", "attempt": c.Candidate + 1, "stream": true}}
	if c.errorType != "" {
		r.ErrorType, r.ErrorMessage = text(c.errorType), text(c.errorMessage)
	}
	if c.outcome == success {
		r.Extra["output_tokens"] = c.outputTokens
	} else {
		r.Extra["retryable"] = c.retryable
	}
	return r
}

// writes returns what request i writes, in order, at the persistence level.
func (g lifecycle) writes(i int64) []record {
	if g.persistence == PersistNone {
		return nil
	}
	cands := g.candidates(i)
	out := make([]record, 0, 3*len(cands))
	for _, c := range cands {
		out = append(out, c.dispatched())
		if g.persistence == PersistFull {
			out = append(out, c.streamed(), c.finished(false))
		} else {
			out = append(out, c.finished(true))
		}
	}
	return out
}

// rows returns the rows request i must leave, one per slot (none at PersistNone).
func (g lifecycle) rows(i int64) []record {
	if g.persistence == PersistNone {
		return nil
	}
	cands := g.candidates(i)
	out := make([]record, len(cands))
	for k, c := range cands {
		out[k] = c.row()
	}
	return out
}

func text(s string) pgtype.Text         { return pgtype.Text{String: s, Valid: true} }
func int4(v int32) pgtype.Int4          { return pgtype.Int4{Int32: v, Valid: true} }
func at(t time.Time) pgtype.Timestamptz { return pgtype.Timestamptz{Time: t, Valid: true} }
