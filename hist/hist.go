// Package hist owns latency measurement: µs-resolution HDR histograms, a sharded recorder
// that many goroutines write to without a global lock, and a histogram's millisecond
// percentile summary (Percentiles, which the report's Latency converts from). It knows
// nothing about databases or reports and imports nothing of this module, so that a library
// such as the queue can measure with it without pulling in the rest.
package hist

import (
	"encoding/base64"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	lowestMicros  = 1
	highestMicros = int64(time.Hour / time.Microsecond)
	sigFigs       = 3
)

// Histogram records durations in microseconds with 3 significant figures from 1 µs to one
// hour. Values above an hour are clamped to an hour. It is not safe for concurrent use; see
// Sharded.
type Histogram struct {
	h *hdr.Histogram
}

// New returns an empty histogram.
func New() *Histogram {
	return &Histogram{h: hdr.New(lowestMicros, highestMicros, sigFigs)}
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) { h.RecordMicros(d.Microseconds()) }

// RecordMicros adds one value in microseconds.
func (h *Histogram) RecordMicros(us int64) {
	if us < lowestMicros {
		us = lowestMicros
	}
	if us > highestMicros {
		us = highestMicros
	}
	_ = h.h.RecordValue(us) // cannot fail: the value was clamped into range
}

// Merge adds every value of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o != nil {
		h.h.Merge(o.h)
	}
}

// Reset empties the histogram.
func (h *Histogram) Reset() { h.h.Reset() }

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Clone returns an independent copy.
func (h *Histogram) Clone() *Histogram { return &Histogram{h: h.h.Clone()} }

// ValueAtQuantile returns the value at quantile q (0..100) as a duration.
func (h *Histogram) ValueAtQuantile(q float64) time.Duration {
	return time.Duration(h.h.ValueAtQuantile(q)) * time.Microsecond
}

// Max is the largest recorded value.
func (h *Histogram) Max() time.Duration { return time.Duration(h.h.Max()) * time.Microsecond }

// Percentiles summarises a histogram in milliseconds, rounded to the µs. The report's Latency
// has the same fields and converts from it.
type Percentiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

// Summary returns p50/p95/p99/p99.9/max/mean in milliseconds. An empty histogram gives zeros.
func (h *Histogram) Summary() Percentiles {
	n := h.h.TotalCount()
	if n == 0 {
		return Percentiles{}
	}
	q := h.h.ValueAtPercentiles([]float64{50, 95, 99, 99.9})
	return Percentiles{
		Count: n,
		P50:   microsToMs(q[50]),
		P95:   microsToMs(q[95]),
		P99:   microsToMs(q[99]),
		P999:  microsToMs(q[99.9]),
		Max:   microsToMs(h.h.Max()),
		Mean:  round3(h.h.Mean() / 1000),
	}
}

// Encode returns the V2-compressed HDR encoding in base64, mergeable by Decode.
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Decode reverses Encode.
func Decode(s string) (*Histogram, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	h, err := hdr.Decode(b)
	if err != nil {
		return nil, err
	}
	return &Histogram{h: h}, nil
}

func microsToMs(us int64) float64 { return round3(float64(us) / 1000) }

// round3 keeps µs resolution in millisecond values without float noise in the JSON.
func round3(ms float64) float64 {
	if ms < 0 {
		return -float64(int64(-ms*1000+0.5)) / 1000
	}
	return float64(int64(ms*1000+0.5)) / 1000
}

// Sharded is a set of histograms that many goroutines record into at once. A goroutine records
// into the shard it was given (worker id modulo the shard count), so contention is limited to
// the goroutines sharing a shard; readers merge all shards.
type Sharded struct {
	shards []shard
}

type shard struct {
	mu sync.Mutex
	h  *Histogram
	_  [40]byte // keep neighbouring shards' mutexes off one cache line
}

// NewSharded returns n shards (at least 1).
func NewSharded(n int) *Sharded {
	if n < 1 {
		n = 1
	}
	s := &Sharded{shards: make([]shard, n)}
	for i := range s.shards {
		s.shards[i].h = New()
	}
	return s
}

// Record adds d to the shard chosen by key.
func (s *Sharded) Record(key int, d time.Duration) {
	sh := &s.shards[uint(key)%uint(len(s.shards))]
	sh.mu.Lock()
	sh.h.Record(d)
	sh.mu.Unlock()
}

// Merged returns a new histogram holding every shard's values.
func (s *Sharded) Merged() *Histogram {
	out := New()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		out.Merge(sh.h)
		sh.mu.Unlock()
	}
	return out
}

// Reset empties every shard (used when a warm-up ends).
func (s *Sharded) Reset() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.h.Reset()
		sh.mu.Unlock()
	}
}

// Cumulative returns, for each bound (ascending, in µs), how many recorded values are at most
// that bound, and the sum of all values in µs: the buckets of a Prometheus histogram. A value
// is placed by the top of its HDR bucket (within 0.1% of the value), never below it.
func (h *Histogram) Cumulative(boundsMicros []int64) (counts []uint64, sumMicros float64) {
	counts = make([]uint64, len(boundsMicros))
	for _, bar := range h.h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		sumMicros += float64(bar.From+bar.To) / 2 * float64(bar.Count)
		for i := len(boundsMicros) - 1; i >= 0 && bar.To <= boundsMicros[i]; i-- {
			counts[i] += uint64(bar.Count)
		}
	}
	return counts, sumMicros
}

// Since returns the values recorded in h after earlier was cloned from it (h minus earlier,
// count by count), e.g. the lag of the records written in the last second.
func (h *Histogram) Since(earlier *Histogram) *Histogram {
	now := h.h.Export()
	if earlier != nil {
		for i, c := range earlier.h.Export().Counts {
			if i < len(now.Counts) {
				now.Counts[i] = max(now.Counts[i]-c, 0)
			}
		}
	}
	return &Histogram{h: hdr.Import(now)}
}
