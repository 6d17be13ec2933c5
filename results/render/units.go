package render

import "github.com/hotspotkit/hotspotkit/results/units"

// Units that adapt, for the short summary and its findings: a reader sees "8 µs", "194 ms" and
// "5.60 s" instead of "0.01", "194.4" and "5,595" under one "ms" heading. The table of
// `baseline table` keeps its fixed formats (table.go), so that two tables diff cell by cell.

// FormatDuration writes a latency given in milliseconds: units.Duration ("13 µs", "194 ms").
func FormatDuration(ms float64) string { return units.Duration(ms) }

// FormatBytes writes a byte count: units.Bytes ("766 B", "2.64 kB").
func FormatBytes(b float64) string { return units.Bytes(b) }

// FormatCount writes a count with thousands separators: 60,000.
func FormatCount(v float64) string { return units.Count(v) }

// FormatRatio writes how many times one figure is another: units.Ratio ("222×", "3.4×").
func FormatRatio(r float64) string { return units.Ratio(r) }

func decimalsBelow(v, twoBelow, oneBelow float64) string {
	return units.Decimals(v, twoBelow, oneBelow)
}
func groupThousands(s string) string { return units.GroupThousands(s) }
func formatRPS(v float64) string     { return units.RPS(v) }
func formatCount(v float64) string   { return units.Count(v) }
