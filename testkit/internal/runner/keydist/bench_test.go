package keydist

import "testing"

// sink keeps the compiler from discarding the draws.
var sink int64

func benchmarkZipfian(b *testing.B, n int64, s float64) {
	z, err := NewZipf(n, s)
	if err != nil {
		b.Fatal(err)
	}
	st := NewStream(1, 1)
	for b.Loop() {
		sink += z.Draw(&st)
	}
}

func BenchmarkZipfian099(b *testing.B)           { benchmarkZipfian(b, 10000, 0.99) }
func BenchmarkZipfian099Million(b *testing.B)    { benchmarkZipfian(b, 1_000_000, 0.99) }
func BenchmarkZipfian05(b *testing.B)            { benchmarkZipfian(b, 10000, 0.5) }
func BenchmarkZipfian1(b *testing.B)             { benchmarkZipfian(b, 10000, 1) }
func BenchmarkZipfian12(b *testing.B)            { benchmarkZipfian(b, 10000, 1.2) }
func BenchmarkZipfian099TenBillion(b *testing.B) { benchmarkZipfian(b, 10_000_000_000, 0.99) }

// A request's draw from scratch: its stream, then one zipfian rank.
func BenchmarkZipfian099NewStream(b *testing.B) {
	z, err := NewZipf(10000, 0.99)
	if err != nil {
		b.Fatal(err)
	}
	i := int64(0)
	for b.Loop() {
		st := NewStream(1, i)
		sink += z.Draw(&st)
		i++
	}
}

func BenchmarkNewZipf(b *testing.B) {
	for b.Loop() {
		z, _ := NewZipf(100000, 0.99)
		sink += z.n
	}
}

func BenchmarkNewStream(b *testing.B) {
	i := int64(0)
	for b.Loop() {
		st := NewStream(1, i)
		sink += int64(st.s0)
		i++
	}
}

func BenchmarkUniform(b *testing.B) {
	st := NewStream(1, 1)
	for b.Loop() {
		v, _ := st.Uniform(1, 100000)
		sink += v
	}
}

func BenchmarkExponential(b *testing.B) {
	st := NewStream(1, 1)
	for b.Loop() {
		v, _ := st.Exponential(1, 100000, 5)
		sink += v
	}
}

func BenchmarkGaussian(b *testing.B) {
	st := NewStream(1, 1)
	for b.Loop() {
		v, _ := st.Gaussian(1, 100000, 2.5)
		sink += v
	}
}

func BenchmarkHotKeyZipf099(b *testing.B) {
	d, err := ParseHotKeyDist("zipf:0.99", 1000)
	if err != nil {
		b.Fatal(err)
	}
	i := int64(0)
	for b.Loop() {
		sink += int64(d.Pick(1, i))
		i++
	}
}
