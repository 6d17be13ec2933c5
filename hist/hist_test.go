package hist

import (
	"math"
	"sync"
	"testing"
	"time"
)

// withinPrecision reports whether got is want to 3 significant figures (HDR's promise: the
// value's bucket is at most 1/1000 of it wide).
func withinPrecision(got, want time.Duration) bool {
	return math.Abs(float64(got-want)) <= float64(want)/1000+float64(time.Microsecond)
}

func uniform(n int64) *Histogram {
	h := New()
	for us := int64(1); us <= n; us++ {
		h.RecordMicros(us)
	}
	return h
}

func TestPercentilesOfAKnownDistribution(t *testing.T) {
	h := uniform(100_000) // 1 µs … 100 ms, once each
	if h.Count() != 100_000 {
		t.Fatalf("count %d", h.Count())
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{50, 50 * time.Millisecond},
		{95, 95 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{99.9, 99900 * time.Microsecond},
		{100, 100 * time.Millisecond},
	} {
		if got := h.ValueAtQuantile(tc.q); !withinPrecision(got, tc.want) {
			t.Errorf("p%v = %v, want %v to 3 significant figures", tc.q, got, tc.want)
		}
	}
	if got := h.Max(); !withinPrecision(got, 100*time.Millisecond) {
		t.Errorf("max %v", got)
	}

	s := h.Summary()
	want := Percentiles{Count: 100_000, P50: 50, P95: 95, P99: 99, P999: 99.9, Max: 100, Mean: 50}
	for name, pair := range map[string][2]float64{
		"p50": {s.P50, want.P50}, "p95": {s.P95, want.P95}, "p99": {s.P99, want.P99},
		"p999": {s.P999, want.P999}, "max": {s.Max, want.Max}, "mean": {s.Mean, want.Mean},
	} {
		if math.Abs(pair[0]-pair[1]) > pair[1]/1000+0.001 {
			t.Errorf("summary %s = %v ms, want %v ms", name, pair[0], pair[1])
		}
	}
	if s.Count != want.Count {
		t.Errorf("summary count %d", s.Count)
	}
}

func TestSummaryKeepsMicrosecondResolution(t *testing.T) {
	h := New()
	h.Record(1500 * time.Microsecond)
	h.Record(1500 * time.Microsecond)
	h.Record(250 * time.Microsecond)
	s := h.Summary()
	if s.Count != 3 || s.P50 != 1.5 || s.Max != 1.5 || s.Mean != 1.083 {
		t.Errorf("summary %+v, want count 3, p50 1.5, max 1.5, mean 1.083 (ms)", s)
	}
	if got := New().Summary(); got != (Percentiles{}) {
		t.Errorf("empty summary %+v, want zeros", got)
	}
}

func TestValuesAreClampedIntoRange(t *testing.T) {
	h := New()
	h.Record(0)
	h.Record(-time.Second)
	h.Record(500 * time.Nanosecond) // under 1 µs
	h.RecordMicros(-7)
	if h.Count() != 4 || h.Max() != time.Microsecond {
		t.Errorf("below range: count %d max %v, want 4 values of 1µs", h.Count(), h.Max())
	}
	h.Record(3 * time.Hour)
	h.RecordMicros(math.MaxInt64)
	if h.Count() != 6 {
		t.Errorf("above range: count %d, want 6 (clamped, not dropped)", h.Count())
	}
	if got := h.Max(); !withinPrecision(got, time.Hour) {
		t.Errorf("max %v, want one hour", got)
	}
}

func TestShardedMergesEveryShard(t *testing.T) {
	const (
		goroutines = 32
		perG       = 2_000
	)
	s := NewSharded(8)
	want := New()
	for g := range goroutines {
		for i := range perG {
			want.RecordMicros(int64(g*perG + i + 1))
		}
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				s.Record(g, time.Duration(g*perG+i+1)*time.Microsecond)
			}
		})
	}
	wg.Wait()

	got := s.Merged()
	if got.Count() != goroutines*perG {
		t.Fatalf("merged count %d, want %d", got.Count(), goroutines*perG)
	}
	// Merging loses nothing: the result is the histogram of all the values recorded in one.
	for _, q := range []float64{0, 1, 25, 50, 75, 90, 99, 99.9, 100} {
		if g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q); g != w {
			t.Errorf("p%v merged %v, single histogram %v", q, g, w)
		}
	}
	if got.Summary() != want.Summary() {
		t.Errorf("summaries differ: merged %+v, single %+v", got.Summary(), want.Summary())
	}

	s.Reset()
	if n := s.Merged().Count(); n != 0 {
		t.Errorf("after Reset, %d values", n)
	}
}

func TestShardKeys(t *testing.T) {
	s := NewSharded(0) // at least one shard
	s.Record(-3, time.Millisecond)
	s.Record(1<<40, time.Millisecond)
	if n := s.Merged().Count(); n != 2 {
		t.Errorf("count %d, want 2", n)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	h := uniform(20_000)
	h.Record(42 * time.Minute)
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if back.Count() != h.Count() || back.Max() != h.Max() || back.Summary() != h.Summary() {
		t.Errorf("decoded %+v, encoded %+v", back.Summary(), h.Summary())
	}
	for _, q := range []float64{1, 50, 99, 99.99} {
		if back.ValueAtQuantile(q) != h.ValueAtQuantile(q) {
			t.Errorf("p%v: decoded %v, encoded %v", q, back.ValueAtQuantile(q), h.ValueAtQuantile(q))
		}
	}
	// A decoded histogram merges like any other, which is what reports from several
	// processes rely on.
	back.Merge(h)
	if back.Count() != 2*h.Count() {
		t.Errorf("merged decoded count %d, want %d", back.Count(), 2*h.Count())
	}

	empty, err := New().Encode()
	if err != nil {
		t.Fatal(err)
	}
	if e, err := Decode(empty); err != nil || e.Count() != 0 {
		t.Errorf("empty round trip: %v, %v", e, err)
	}

	for _, bad := range []string{"not base64!", "aGVsbG8gd29ybGQ="} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%q) accepted garbage", bad)
		}
	}
}

func TestCloneResetMerge(t *testing.T) {
	h := uniform(100)
	c := h.Clone()
	h.Reset()
	if h.Count() != 0 || c.Count() != 100 {
		t.Errorf("after Reset of the original: original %d, clone %d", h.Count(), c.Count())
	}
	c.Merge(nil)
	if c.Count() != 100 {
		t.Errorf("Merge(nil) changed the count to %d", c.Count())
	}
}

func TestCumulativeBuckets(t *testing.T) {
	h := uniform(10_000) // 1 µs … 10 ms, once each
	counts, sum := h.Cumulative([]int64{1000, 5000, 20_000})
	for i, want := range []uint64{1000, 5000, 10_000} {
		// A value sits in the bucket its HDR bucket's top falls into: off by at most 0.1%.
		if d := math.Abs(float64(counts[i]) - float64(want)); d > float64(want)/1000+1 {
			t.Errorf("bucket %d: %d values, want %d", i, counts[i], want)
		}
	}
	if want := 10_000.0 * 10_001 / 2; math.Abs(sum-want) > want/1000 {
		t.Errorf("sum %.0f µs, want %.0f", sum, want)
	}
}

func TestSinceKeepsOnlyTheNewValues(t *testing.T) {
	h := New()
	for range 100 {
		h.Record(time.Millisecond)
	}
	before := h.Clone()
	for range 10 {
		h.Record(time.Second)
	}
	d := h.Since(before)
	if d.Count() != 10 || !withinPrecision(d.ValueAtQuantile(50), time.Second) {
		t.Errorf("since: %d values, p50 %v; want 10 values of 1s", d.Count(), d.ValueAtQuantile(50))
	}
	if all := h.Since(nil); all.Count() != 110 {
		t.Errorf("since nil: %d values, want 110", all.Count())
	}
}
