package candidates

import (
	"database/sql"
	"fmt"
	"time"
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
		provider:    names.providers.of(s.Candidate),
		key:         names.keys[t%8].of(s.Candidate),
		endpoint:    names.endpoints.of(s.Candidate),
		createdAt:   created,
		startedAt:   created.Add(2 * time.Millisecond),
		firstByteMs: int32(20 + (t>>3)%180),
		retryable:   retryable,
	}
	c.latencyMs = c.firstByteMs + int32(50+(t>>11)%950)
	switch outcome {
	case success:
		c.statusCode, c.outputTokens = 200, minOutputTokens+int((t>>21)%outputTokenValues)
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

// The extra_data each write contributes; the row ends with their shallow merge. Records
// never modify their extra (see record), so the maps are built once, for every candidate index
// (0 and 1) and output token count candidates makes, and shared: the queue may hold every write
// of a run at once.
func (c candidate) dispatchedExtra() map[string]any { return shared.dispatched[c.Candidate] }

func dispatchedExtra(candidate int32) map[string]any {
	return map[string]any{"model": "gpt-5", "attempt": candidate + 1}
}

func (c candidate) streamingExtra() map[string]any { return shared.streaming }

// terminalExtra is what the terminal write adds; with withStream, merged with what the
// streaming write would have added.
func (c candidate) terminalExtra(withStream bool) map[string]any {
	if c.outcome != success {
		return shared.failed[b2i(withStream)][b2i(c.retryable)]
	}
	return shared.succeeded[b2i(withStream)][c.outputTokens-minOutputTokens]
}

func succeededExtra(withStream bool, outputTokens int) map[string]any {
	if withStream {
		return map[string]any{"stream": true, "output_tokens": outputTokens}
	}
	return map[string]any{"output_tokens": outputTokens}
}

// A successful candidate's output tokens: one of outputTokenValues values from minOutputTokens.
const minOutputTokens, outputTokenValues = 10, 500

// shared holds the extra_data maps that many records share.
var shared = struct {
	dispatched [2]map[string]any // by candidate index
	streaming  map[string]any
	failed     [2][2]map[string]any // [withStream][retryable]
	succeeded  [2][]map[string]any  // [withStream][outputTokens-minOutputTokens]
}{
	dispatched: [2]map[string]any{dispatchedExtra(0), dispatchedExtra(1)},
	streaming:  map[string]any{"stream": true},
	failed: [2][2]map[string]any{
		{{"retryable": false}, {"retryable": true}},
		{{"stream": true, "retryable": false}, {"stream": true, "retryable": true}},
	},
	succeeded: func() (m [2][]map[string]any) {
		for stream := range m {
			for v := range outputTokenValues {
				m[stream] = append(m[stream], succeededExtra(stream == 1, minOutputTokens+v))
			}
		}
		return m
	}(),
}

// nameSet holds a name formatted for candidate indexes 0 and 1 (all that candidates makes),
// so that candidates share their provider, key and endpoint strings.
type nameSet [2]string

func newNameSet(format string) (n nameSet) {
	for c := range n {
		n[c] = fmt.Sprintf(format, c)
	}
	return n
}

func (n nameSet) of(candidate int32) string { return n[candidate] }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var names = func() (n struct {
	providers, endpoints nameSet
	keys                 [8]nameSet
}) {
	n.providers, n.endpoints = newNameSet("provider-%d"), newNameSet("endpoint-%d")
	for k := range n.keys {
		n.keys[k] = newNameSet("pkey-%d-" + fmt.Sprint(k))
	}
	return n
}()

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
		LatencyMs: int4(c.latencyMs), FinishedAt: at(c.finishedAt()), Extra: c.terminalExtra(withStream)}
	if c.errorType != "" {
		r.ErrorType, r.ErrorMessage = text(c.errorType), text(c.errorMessage)
	}
	if withStream {
		r.StartedAt, r.FirstByteMs = at(c.startedAt), int4(c.firstByteMs)
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

func text(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
func int4(v int32) sql.NullInt32   { return sql.NullInt32{Int32: v, Valid: true} }
func at(t time.Time) sql.NullTime  { return sql.NullTime{Time: t, Valid: true} }
