package pgscript

import "math/bits"

// The hash functions and permute are pgbench's own, bit for bit, so that a script computes
// the keys it would compute under pgbench with the same seed.

const (
	fnvPrime       = 0x100000001b3
	fnvOffsetBasis = 0xcbf29ce484222325
	murmur2Mul     = 0xc6a4a7935bd1e995
	murmur2MulBy8  = 0x35253c9ade8f4ca8 // murmur2Mul * 8, for the 8 bytes of an int64
	murmur2Shift   = 47
)

// hashFNV1a is FNV-1a over the 8 bytes of val, least significant first, from the offset
// basis xor seed.
func hashFNV1a(val int64, seed int64) int64 {
	result := uint64(fnvOffsetBasis) ^ uint64(seed)
	v := uint64(val)
	for i := 0; i < 8; i++ {
		result ^= v & 0xff
		result *= fnvPrime
		v >>= 8
	}
	return int64(result)
}

// hashMurmur2 is MurmurHash64A of the 8 bytes of val.
func hashMurmur2(val int64, seed int64) int64 {
	result := uint64(seed) ^ murmur2MulBy8
	k := uint64(val)
	k *= murmur2Mul
	k ^= k >> murmur2Shift
	k *= murmur2Mul
	result ^= k
	result *= murmur2Mul
	result ^= result >> murmur2Shift
	result *= murmur2Mul
	result ^= result >> murmur2Shift
	return int64(result)
}

// pgPRNG is PostgreSQL's pg_prng: xoroshiro128** seeded by splitmix64, which permute draws
// its rounds from.
type pgPRNG struct{ s0, s1 uint64 }

func newPgPRNG(seed uint64) pgPRNG {
	next := func() uint64 {
		seed += 0x9e3779b97f4a7c15
		v := seed
		v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9
		v = (v ^ (v >> 27)) * 0x94d049bb133111eb
		return v ^ (v >> 31)
	}
	p := pgPRNG{s0: next(), s1: next()}
	if p.s0 == 0 && p.s1 == 0 {
		p = pgPRNG{0x5851f42d4c957f2d, 0x14057b7ef767814f}
	}
	return p
}

func (p *pgPRNG) uint64() uint64 {
	s0 := p.s0
	sx := p.s1 ^ s0
	val := bits.RotateLeft64(s0*5, 7) * 9
	p.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ (sx << 16)
	p.s1 = bits.RotateLeft64(sx, 37)
	return val
}

// uint64Range is pg_prng_uint64_range: uniform in [lo, hi] by bitmask rejection.
func (p *pgPRNG) uint64Range(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	r := hi - lo
	shift := uint(bits.LeadingZeros64(r))
	for {
		v := p.uint64() >> shift
		if v <= r {
			return lo + v
		}
	}
}

// permute is pgbench's permute: the position of val (mod size) in a pseudo-random
// permutation of [0, size) chosen by seed. size must be above 0.
func permute(val, size, seed int64) int64 {
	if size < 2 {
		return 0
	}
	rng := newPgPRNG(uint64(seed))
	n := uint64(size)
	v := uint64(val) % n
	maskLen := uint(63 - bits.LeadingZeros64(n))
	mask := uint64(1)<<maskLen - 1
	for i := 0; i < 6; i++ {
		m := rng.uint64()&mask | 1
		r := rng.uint64() & mask
		if v <= mask {
			v = (v*m ^ r) & mask
			v = (v<<1)&mask | v>>(maskLen-1)
		}
		m = rng.uint64()&mask | 1
		r = rng.uint64() & mask
		t := n - 1 - v
		if t <= mask {
			t = (t*m ^ r) & mask
			t = (t<<1)&mask | t>>(maskLen-1)
			v = n - 1 - t
		}
		r = rng.uint64Range(0, n-1)
		v = (v + r) % n
	}
	return int64(v)
}
