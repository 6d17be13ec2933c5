package keydist

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// HotKeyDist is the built-in suites' --hot-key-dist over --hot-keys keys: which hot key set a
// request writes, rank 0 the hottest. ParseHotKeyDist makes one (the zero value is not
// usable); it is immutable and safe for concurrent use.
type HotKeyDist struct {
	kind      hotKeyKind
	parameter float64
	keys      int
	zipf      *Zipf
	// zipfNorm is the zipfian normaliser over keys, summed once for Share.
	zipfNorm float64
}

type hotKeyKind int

const (
	hotKeyUniform hotKeyKind = iota
	hotKeyZipf
	hotKeyExponential
)

// hotKeyDomain separates the hot-key draw of a request from any other draw made from the same
// (seed, request), such as a script's variables.
const hotKeyDomain = 0x686f746b657973 // "hotkeys"

// ParseHotKeyDist reads --hot-key-dist for hotKeys keys:
//
//   - uniform: request i writes key i mod hotKeys, every key the same share (what the suites
//     have always done);
//   - zipf:θ, θ > 0: rank r (0-based) with probability ∝ 1/(r+1)^θ, exactly; θ = 0.99 is YCSB's;
//   - exponential:λ, λ > 0: pgbench's random_exponential over the keys; the larger λ, the
//     more the writes crowd on the first keys.
func ParseHotKeyDist(spec string, hotKeys int) (HotKeyDist, error) {
	if hotKeys < 1 {
		return HotKeyDist{}, fmt.Errorf("--hot-key-dist: needs --hot-keys of at least 1, got %d", hotKeys)
	}
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(spec), ":")
	d := HotKeyDist{keys: hotKeys}
	switch strings.ToLower(kind) {
	case "uniform":
		if hasArg {
			return HotKeyDist{}, fmt.Errorf("--hot-key-dist: uniform takes no parameter, got %q", spec)
		}
		d.kind = hotKeyUniform
		return d, nil
	case "zipf":
		theta, err := hotKeyParameter("zipf", "θ", arg, hasArg)
		if err != nil {
			return HotKeyDist{}, err
		}
		if theta > MaxZipfianParameter {
			return HotKeyDist{}, fmt.Errorf("--hot-key-dist: zipf needs θ of at most %g, got %s", MaxZipfianParameter, arg)
		}
		z, err := NewZipf(int64(hotKeys), theta)
		if err != nil {
			return HotKeyDist{}, fmt.Errorf("--hot-key-dist: %w", err)
		}
		d.kind, d.parameter, d.zipf, d.zipfNorm = hotKeyZipf, theta, z, zipfNormalizer(int64(hotKeys), theta)
		return d, nil
	case "exponential":
		lambda, err := hotKeyParameter("exponential", "λ", arg, hasArg)
		if err != nil {
			return HotKeyDist{}, err
		}
		d.kind, d.parameter = hotKeyExponential, lambda
		return d, nil
	default:
		return HotKeyDist{}, fmt.Errorf("--hot-key-dist: %q is none of uniform, zipf:θ, exponential:λ", spec)
	}
}

// hotKeyParameter reads the positive parameter of a --hot-key-dist kind.
func hotKeyParameter(kind, symbol, arg string, hasArg bool) (float64, error) {
	if !hasArg || arg == "" {
		return 0, fmt.Errorf("--hot-key-dist: %s needs %s > 0, as %s:1.5", kind, symbol, kind)
	}
	v, err := strconv.ParseFloat(arg, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("--hot-key-dist: %s needs %s > 0, got %s", kind, symbol, arg)
	}
	return v, nil
}

// String is the canonical spec: uniform, zipf:θ or exponential:λ.
func (d HotKeyDist) String() string {
	switch d.kind {
	case hotKeyZipf:
		return "zipf:" + strconv.FormatFloat(d.parameter, 'g', -1, 64)
	case hotKeyExponential:
		return "exponential:" + strconv.FormatFloat(d.parameter, 'g', -1, 64)
	default:
		return "uniform"
	}
}

// Keys is the number of hot keys.
func (d HotKeyDist) Keys() int { return d.keys }

// Pick is the hot key (rank, 0 the hottest) of request in the run seeded with seed.
func (d HotKeyDist) Pick(seed, request int64) int {
	switch d.kind {
	case hotKeyZipf:
		st := NewStream(seed^hotKeyDomain, request)
		return int(d.zipf.Draw(&st) - 1)
	case hotKeyExponential:
		st := NewStream(seed^hotKeyDomain, request)
		k, _ := st.Exponential(0, int64(d.keys)-1, d.parameter) // parameter checked at parse
		return int(k)
	default:
		k := request % int64(d.keys)
		if k < 0 {
			k += int64(d.keys)
		}
		return int(k)
	}
}

// Share is the theoretical share of the requests that pick rank (0 outside [0, Keys())). For
// uniform it is the limit; i mod Keys() meets it exactly at every multiple of Keys().
func (d HotKeyDist) Share(rank int) float64 {
	if rank < 0 || rank >= d.keys {
		return 0
	}
	switch d.kind {
	case hotKeyZipf:
		return math.Pow(float64(rank+1), -d.parameter) / d.zipfNorm
	case hotKeyExponential:
		// f(r) - f(r+1), f(x) = exp(-λx/n)/(1 - exp(-λ)), in expm1 for small λ/n.
		n := float64(d.keys)
		return math.Exp(-d.parameter*float64(rank)/n) * math.Expm1(-d.parameter/n) / math.Expm1(-d.parameter)
	default:
		return 1 / float64(d.keys)
	}
}

// HottestShare is the theoretical share of the requests that pick the hottest key, rank 0.
func (d HotKeyDist) HottestShare() float64 { return d.Share(0) }
