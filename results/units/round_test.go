package units

import (
	"math"
	"testing"
	"time"
)

func TestRound(t *testing.T) {
	for _, c := range []struct {
		v      float64
		places int
		want   float64
	}{
		{1.25, 1, 1.3},
		{-1.25, 1, -1.3}, // int64(v*10+0.5) made this -1.2
		{-1.24, 1, -1.2},
		{-1.26, 1, -1.3},
		{0.5, 0, 1},
		{-0.5, 0, -1},
		{2.5, 0, 3}, // away from zero, not to even
		{-2.5, 0, -3},
		{0.125, 2, 0.13},
		{-0.125, 2, -0.13},
		{0.0005, 3, 0.001},
		{-0.0005, 3, -0.001},
		{0.00049, 3, 0},
		{-0.00049, 3, 0},
		{12.34567, 4, 12.3457},
		{70996.96, 1, 70997},
		{1e15 + 0.25, 1, 1e15 + 0.3},
		{1e18, 1, 1e18},     // beyond the precision left: as it is
		{9.3e18, 1, 9.3e18}, // beyond int64, where int64(v*10+0.5) overflowed
		{-9.3e18, 4, -9.3e18},
		{1.5, -1, 0}, // to tens
		{15, -1, 20},
		{0, 3, 0},
	} {
		if got := Round(c.v, c.places); got != c.want {
			t.Errorf("Round(%v, %d) = %v, want %v", c.v, c.places, got, c.want)
		}
	}
	for _, v := range []float64{math.Inf(1), math.Inf(-1)} {
		if got := Round(v, 3); got != v {
			t.Errorf("Round(%v, 3) = %v", v, got)
		}
	}
	if got := Round(math.NaN(), 3); !math.IsNaN(got) {
		t.Errorf("Round(NaN, 3) = %v", got)
	}
}

// TestRoundKeepsPositiveFigures: for every positive figure a report held, Round gives what the
// helpers it replaced gave (float64(int64(v·10^places + 0.5)) / 10^places).
func TestRoundKeepsPositiveFigures(t *testing.T) {
	old := func(v float64, places int) float64 {
		p := math.Pow10(places)
		return float64(int64(v*p+0.5)) / p
	}
	for places := 0; places <= 4; places++ {
		for i := range 200_000 {
			v := float64(i) / 997 * math.Pow10(i%7-2)
			if got, want := Round(v, places), old(v, places); got != want {
				t.Fatalf("Round(%v, %d) = %v, the old helpers %v", v, places, got, want)
			}
		}
	}
}

func TestMs(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want float64
	}{
		{1500 * time.Microsecond, 1.5},
		{1999 * time.Nanosecond, 0.001}, // to the µs, cut
		{-1500 * time.Microsecond, -1.5},
		{90 * time.Second, 90_000},
	} {
		if got := Ms(c.d); got != c.want {
			t.Errorf("Ms(%v) = %v, want %v", c.d, got, c.want)
		}
	}
}
