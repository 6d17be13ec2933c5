// Package units writes figures as people read them: durations from milliseconds in µs, ms or
// s; counts and rates with thousands grouped; bytes in B, kB, MB; ratios as "3.4×". It is
// shared by the renderers (results/render) and the live progress line of a run
// (testkit/internal/runner/load), so that neither needs the other; it measures and reads nothing.
// It also holds the one rounding of a figure a report stores (Round) and a measured duration
// in a report's milliseconds (Ms), for package results and everything that builds a report.
package units

import (
	"math"
	"strconv"
	"strings"
)

// Duration writes a latency given in milliseconds (as a report holds it, read from a
// µs-resolution histogram) in µs below 1 ms, ms below 1 s, s above, with about three
// significant digits: "<1 µs", "13 µs", "691 µs", "1.78 ms", "194 ms", "5.60 s", "18.6 s".
func Duration(ms float64) string {
	switch a := math.Abs(ms); {
	case a < 0.0005:
		return "<1 µs"
	case a < 1:
		return strconv.FormatFloat(ms*1000, 'f', 0, 64) + " µs"
	case a < 1000:
		return threeDigits(ms) + " ms"
	}
	return threeDigits(ms/1000) + " s"
}

// Bytes writes a byte count in B, kB, MB or GB (powers of 1,000), about three
// significant digits: "766 B", "2.64 kB", "13.1 MB".
func Bytes(b float64) string {
	units := []string{"B", "kB", "MB", "GB"}
	i := 0
	for math.Abs(b) >= 999.5 && i < len(units)-1 {
		b /= 1000
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(math.Round(b), 'f', 0, 64) + " B"
	}
	return threeDigits(b) + " " + units[i]
}

// Ratio writes how many times one figure is another: "222×", "3.4×", "1.08×".
func Ratio(r float64) string {
	switch a := math.Abs(r); {
	case a >= 100:
		return GroupThousands(strconv.FormatFloat(math.Round(r), 'f', 0, 64)) + "×"
	case a >= 10:
		return strconv.FormatFloat(r, 'f', 0, 64) + "×"
	case a >= 1.1:
		return strconv.FormatFloat(r, 'f', 1, 64) + "×"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// threeDigits writes v (≥ 1 in magnitude) with about three significant digits, thousands
// grouped: 1.78, 19.4, 194, 1,532.
func threeDigits(v float64) string { return Decimals(v, 9.995, 99.95) }

// Decimals writes v with two decimals below twoBelow, one below oneBelow, else none with
// thousands grouped.
func Decimals(v, twoBelow, oneBelow float64) string {
	switch a := math.Abs(v); {
	case a < twoBelow:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < oneBelow:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return GroupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
}

// Count writes a count with thousands separators (60,000), with one decimal when it has any.
func Count(v float64) string {
	if v == math.Trunc(v) {
		return GroupThousands(strconv.FormatFloat(v, 'f', 0, 64))
	}
	return GroupThousands(strconv.FormatFloat(v, 'f', 1, 64))
}

// Number formats. They are fixed so that two tables of the same numbers are byte-identical and
// a changed number changes one cell:
//   - rps: rounded to a whole number, thousands separated by commas: 152,340.
//   - counts (failed, waiters, sql ops): whole numbers with commas; a median of an even number
//     of runs that falls on .5 keeps one decimal: 12.5.
//   - ms: two decimals below 100 (3.47), one from 100 to 1,000 (153.2), none with commas above
//     (1,532).
//   - pool max %: basis points / 100 with one decimal (98.5).
//   - a spread is "median (min–max)", each part in the metric's format; min = max shows the
//     median alone.
//   - a value that does not apply to the row (persist lag of a sync run) is "–".
//
// RPS writes a rate rounded to a whole number, thousands grouped: 55,107.
func RPS(v float64) string {
	return GroupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
}

// groupThousands puts commas into the integer part of a formatted decimal number.
func GroupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	if len(intPart) <= 3 {
		return sign + s
	}
	var b strings.Builder
	lead := len(intPart) % 3
	if lead > 0 {
		b.WriteString(intPart[:lead])
	}
	for i := lead; i < len(intPart); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(intPart[i : i+3])
	}
	return sign + b.String() + frac
}
