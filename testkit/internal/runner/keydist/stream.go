// Package keydist owns the kit's deterministic randomness: a small pseudo-random stream per
// request, recomputable by any process from (seed, request index) alone, and the integer
// distributions drawn from it — uniform, pgbench's exponential and Gaussian, and an exact
// bounded zipfian for any exponent s > 0 (pgbench itself accepts s ≥ 1.001 only; YCSB's
// θ = 0.99 needs s < 1). It also parses the built-in suites' --hot-key-dist and gives the
// theoretical share of each hot key.
//
// Nothing here keeps state between draws except a Stream value the caller owns, so the same
// (seed, request) always yields the same draws, in any process, on any goroutine. The package
// knows nothing of SQL, scripts, suites or the engine.
package keydist

import "math/bits"

// Stream is the pseudo-random stream of one request: xoshiro256** seeded through splitmix64
// from (seed, request). It is a value: copy it to replay, pass a pointer to draw. It is not
// safe for concurrent use; each request gets its own.
type Stream struct {
	s0, s1, s2, s3 uint64
}

// golden is splitmix64's increment, 2^64 divided by the golden ratio.
const golden uint64 = 0x9e3779b97f4a7c15

// NewStream returns the stream of request in the run seeded with seed. The four state words
// are splitmix64 outputs at counters that no other request of the same seed uses, so two
// requests of one run never start from the same state.
func NewStream(seed, request int64) Stream {
	counter := mix64(uint64(seed)) + uint64(request)*4*golden
	var st Stream
	for _, word := range []*uint64{&st.s0, &st.s1, &st.s2, &st.s3} {
		counter += golden
		*word = mix64(counter)
	}
	return st
}

// mix64 is splitmix64's output function, a bijection of uint64.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Uint64 draws 64 uniform bits.
func (s *Stream) Uint64() uint64 {
	result := bits.RotateLeft64(s.s1*5, 7) * 9
	t := s.s1 << 17
	s.s2 ^= s.s0
	s.s3 ^= s.s1
	s.s1 ^= s.s2
	s.s0 ^= s.s3
	s.s2 ^= t
	s.s3 = bits.RotateLeft64(s.s3, 45)
	return result
}

// Float64 draws a uniform float64 in [0, 1), a multiple of 2^-53.
func (s *Stream) Float64() float64 {
	return float64(s.Uint64()>>11) * 0x1p-53
}

// Uint64n draws a uniform integer in [0, n), without bias (Lemire's multiply and reject). n
// must be above 0.
func (s *Stream) Uint64n(n uint64) uint64 {
	hi, lo := bits.Mul64(s.Uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(s.Uint64(), n)
		}
	}
	return hi
}
