package render

import (
	"math"
	"strconv"
)

// Units that adapt, for the short summary and its findings: a reader sees "8 µs", "194 ms" and
// "5.60 s" instead of "0.01", "194.4" and "5,595" under one "ms" heading. The table of
// `baseline table` keeps its fixed formats (table.go), so that two tables diff cell by cell.

// FormatDuration writes a latency given in milliseconds (as a report holds it, read from a
// µs-resolution histogram) in µs below 1 ms, ms below 1 s, s above, with about three
// significant digits: "<1 µs", "13 µs", "691 µs", "1.78 ms", "194 ms", "5.60 s", "18.6 s".
func FormatDuration(ms float64) string {
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

// FormatBytes writes a byte count in B, kB, MB or GB (powers of 1,000), about three
// significant digits: "766 B", "2.64 kB", "13.1 MB".
func FormatBytes(b float64) string {
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

// FormatCount writes a count with thousands separators: 60,000.
func FormatCount(v float64) string { return formatCount(v) }

// FormatRatio writes how many times one figure is another: "222×", "3.4×", "1.08×".
func FormatRatio(r float64) string {
	switch a := math.Abs(r); {
	case a >= 100:
		return groupThousands(strconv.FormatFloat(math.Round(r), 'f', 0, 64)) + "×"
	case a >= 10:
		return strconv.FormatFloat(r, 'f', 0, 64) + "×"
	case a >= 1.1:
		return strconv.FormatFloat(r, 'f', 1, 64) + "×"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// threeDigits writes v (≥ 1 in magnitude) with about three significant digits, thousands
// grouped: 1.78, 19.4, 194, 1,532.
func threeDigits(v float64) string { return decimalsBelow(v, 9.995, 99.95) }

// decimalsBelow writes v with two decimals below twoBelow, one below oneBelow, else none with
// thousands grouped.
func decimalsBelow(v, twoBelow, oneBelow float64) string {
	switch a := math.Abs(v); {
	case a < twoBelow:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < oneBelow:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
}
