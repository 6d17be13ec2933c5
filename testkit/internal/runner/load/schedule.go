package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Arrivals is how the intended start times of an open-loop run are spaced.
type Arrivals string

const (
	// Poisson spaces arrivals by exponential gaps (independent clients), the default.
	Poisson Arrivals = "poisson"
	// Uniform spaces arrivals evenly (one client on a metronome, wrk2's constant throughput).
	Uniform Arrivals = "uniform"
)

// ParseArrivals accepts "poisson" or "uniform" ("" is Poisson).
func ParseArrivals(s string) (Arrivals, error) {
	switch a := Arrivals(s); a {
	case "", Poisson:
		return Poisson, nil
	case Uniform:
		return a, nil
	}
	return "", fmt.Errorf("unknown arrivals %q (want poisson or uniform)", s)
}

// LateAfter is how far behind its intended start a request may start and still be on time.
const LateAfter = time.Millisecond

// schedule yields the intended start times of an open-loop run, as offsets from its start, in
// order. Arrivals are drawn in "operational time" u, the number of arrivals expected so far
// (exponential gaps of mean 1 for Poisson, gaps of exactly 1 for uniform), and mapped to wall
// time through the inverse of the expected count Λ(t): R·t²/(2D) during a ramp of length D,
// then R·(t − D/2). So a ramp is the same process at a linearly climbing rate, at the cost of a
// square root per arrival during the ramp only. No allocation per arrival.
type schedule struct {
	rate      float64 // R, per second
	ramp      float64 // D, seconds
	rampCount float64 // Λ(D) = R·D/2: arrivals expected during the ramp
	poisson   bool
	rng       *rand.Rand
	u         float64
}

// scheduleStream separates the schedule's draws from anything else seeded with the same seed.
const scheduleStream = 0x5c4ed01e

func newSchedule(rate float64, ramp time.Duration, arrivals Arrivals, seed int64) *schedule {
	d := ramp.Seconds()
	return &schedule{rate: rate, ramp: d, rampCount: rate * d / 2, poisson: arrivals != Uniform,
		rng: rand.New(rand.NewPCG(uint64(seed), scheduleStream))}
}

func (s *schedule) arrivals() Arrivals {
	if s.poisson {
		return Poisson
	}
	return Uniform
}

// next is the intended start of the next arrival.
func (s *schedule) next() time.Duration {
	if s.poisson {
		s.u += s.rng.ExpFloat64()
	} else {
		s.u++
	}
	var sec float64
	if s.u < s.rampCount {
		sec = math.Sqrt(2 * s.ramp * s.u / s.rate)
	} else {
		sec = s.ramp + (s.u-s.rampCount)/s.rate
	}
	return time.Duration(sec * float64(time.Second))
}
