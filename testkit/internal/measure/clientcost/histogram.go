package clientcost

import (
	"math"
	"runtime/metrics"
)

// histogram is a copy of one of the runtime's histograms (in seconds): a reading keeps its
// own, since the runtime may reuse a sample's memory on its next read.
type histogram struct {
	counts  []uint64
	buckets []float64 // len(counts)+1 boundaries; the first may be -Inf, the last +Inf
}

func histogramOf(v metrics.Value) histogram {
	if v.Kind() != metrics.KindFloat64Histogram {
		return histogram{}
	}
	h := v.Float64Histogram()
	return histogram{counts: append([]uint64(nil), h.Counts...), buckets: append([]float64(nil), h.Buckets...)}
}

// minus is what was added to h since earlier, a reading of the same histogram (empty when the
// two do not line up).
func (h histogram) minus(earlier histogram) histogram {
	if len(earlier.counts) != len(h.counts) {
		if len(earlier.counts) == 0 {
			return h
		}
		return histogram{}
	}
	out := histogram{counts: make([]uint64, len(h.counts)), buckets: h.buckets}
	for i, c := range h.counts {
		if c >= earlier.counts[i] {
			out.counts[i] = c - earlier.counts[i]
		}
	}
	return out
}

func (h histogram) count() uint64 {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// bounds are bucket i's finite boundaries: an infinite one is taken as the other.
func (h histogram) bounds(i int) (lo, hi float64) {
	lo, hi = h.buckets[i], h.buckets[i+1]
	if math.IsInf(lo, -1) {
		lo = hi
	}
	if math.IsInf(hi, 1) {
		hi = lo
	}
	return max(lo, 0), max(hi, 0)
}

// sum is the total of the values counted, each taken at its bucket's middle (the runtime's
// buckets are a quarter of their power of two wide or narrower).
func (h histogram) sum() float64 {
	var s float64
	for i, c := range h.counts {
		if c > 0 {
			lo, hi := h.bounds(i)
			s += float64(c) * (lo + hi) / 2
		}
	}
	return s
}

// quantile is the q-quantile of the values counted, taken at the middle of its bucket as sum
// takes every value (so that a p99 never exceeds the total); 0 when nothing was counted.
func (h histogram) quantile(q float64) float64 {
	n := h.count()
	if n == 0 {
		return 0
	}
	target := q * float64(n)
	var cum float64
	last := 0
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		last = i
		if cum += float64(c); cum >= target {
			break
		}
	}
	lo, hi := h.bounds(last)
	return (lo + hi) / 2
}
