package keydist

import (
	"math"
	"strings"
	"testing"
)

func TestParseHotKeyDistRefusesBadSpecs(t *testing.T) {
	for _, c := range []struct {
		spec string
		keys int
		want string
	}{
		{"zipf:0", 10, "--hot-key-dist: zipf needs θ > 0, got 0"},
		{"zipf:-1", 10, "--hot-key-dist: zipf needs θ > 0, got -1"},
		{"zipf:abc", 10, "--hot-key-dist: zipf needs θ > 0, got abc"},
		{"zipf", 10, "--hot-key-dist: zipf needs θ > 0, as zipf:1.5"},
		{"zipf:", 10, "--hot-key-dist: zipf needs θ > 0, as zipf:1.5"},
		{"zipf:2000", 10, "--hot-key-dist: zipf needs θ of at most 1000, got 2000"},
		{"exponential:0", 10, "--hot-key-dist: exponential needs λ > 0, got 0"},
		{"exponential:NaN", 10, "--hot-key-dist: exponential needs λ > 0, got NaN"},
		{"uniform:3", 10, `--hot-key-dist: uniform takes no parameter, got "uniform:3"`},
		{"gaussian:2", 10, `--hot-key-dist: "gaussian:2" is none of uniform, zipf:θ, exponential:λ`},
		{"uniform", 0, "--hot-key-dist: needs --hot-keys of at least 1, got 0"},
	} {
		_, err := ParseHotKeyDist(c.spec, c.keys)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseHotKeyDist(%q, %d) = %v, want %q", c.spec, c.keys, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseHotKeyDist(%q): error of more than one line", c.spec)
		}
	}
}

func TestHotKeyDistStringRoundTrips(t *testing.T) {
	for spec, want := range map[string]string{
		"uniform": "uniform", " Zipf:0.99 ": "zipf:0.99", "zipf:1": "zipf:1", "exponential:2.50": "exponential:2.5",
	} {
		d, err := ParseHotKeyDist(spec, 5)
		if err != nil {
			t.Fatal(err)
		}
		if d.String() != want {
			t.Errorf("ParseHotKeyDist(%q).String() = %q, want %q", spec, d.String(), want)
		}
		again, err := ParseHotKeyDist(d.String(), 5)
		if err != nil || again.String() != want {
			t.Errorf("%q does not parse back: %v", d.String(), err)
		}
	}
}

func TestUniformHotKeysAreRoundRobin(t *testing.T) {
	d, err := ParseHotKeyDist("uniform", 7)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 100; i++ {
		if got := d.Pick(99, i); got != int(i%7) {
			t.Fatalf("request %d picked %d, want %d", i, got, i%7)
		}
	}
	if d.HottestShare() != 1.0/7 {
		t.Errorf("hottest share %v, want 1/7", d.HottestShare())
	}
}

func TestSkewedHotKeysFollowTheirShares(t *testing.T) {
	const draws = 400_000
	for _, spec := range []string{"zipf:0.99", "zipf:0.5", "zipf:1.2", "exponential:3", "exponential:0.1"} {
		d, err := ParseHotKeyDist(spec, 50)
		if err != nil {
			t.Fatal(err)
		}
		observed := make([]float64, d.Keys())
		expected := make([]float64, d.Keys())
		total := 0.0
		for r := range expected {
			expected[r] = d.Share(r) * draws
			total += d.Share(r)
		}
		if math.Abs(total-1) > 1e-12 {
			t.Errorf("%s: shares sum to %.15f", spec, total)
		}
		for i := int64(0); i < draws; i++ {
			k := d.Pick(11, i)
			if k < 0 || k >= d.Keys() {
				t.Fatalf("%s: request %d picked %d", spec, i, k)
			}
			observed[k]++
		}
		if p := chiSquaredPValue(observed, expected); p < significance {
			t.Errorf("%s over %d keys: picks do not follow the shares, p = %.3g", spec, d.Keys(), p)
		}
		if d.Pick(11, 12345) != d.Pick(11, 12345) {
			t.Errorf("%s: a request's pick changed", spec)
		}
	}
}

func TestHottestShare(t *testing.T) {
	for _, c := range []struct {
		spec string
		keys int
		want float64
	}{
		{"zipf:0.99", 1, 1},
		{"zipf:1", 3, 1 / (1 + 1.0/2 + 1.0/3)},
		{"zipf:2", 2, 1 / 1.25},
		{"exponential:1", 1, 1},
		// f(0) - f(1) with n = 2: (1 - e^-1)/(1 - e^-2).
		{"exponential:2", 2, (1 - math.Exp(-1)) / (1 - math.Exp(-2))},
		{"uniform", 4, 0.25},
	} {
		d, err := ParseHotKeyDist(c.spec, c.keys)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.HottestShare(); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s over %d keys: hottest share %.17g, want %.17g", c.spec, c.keys, got, c.want)
		}
	}
}
