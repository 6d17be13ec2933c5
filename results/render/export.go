package render

import "github.com/hotspotkit/hotspotkit/results"

// What packages plot (results/render/plot) and judge (results/render/judge) draw and write with
// of the table's formatting.

// FormatRPS formats a rate as the table does: whole, thousands grouped.
func FormatRPS(v float64) string { return formatRPS(v) }

// SpreadSep separates a spread cell's median from its range: "median (min–max)".
const SpreadSep = spreadSep

// FormatMs formats milliseconds as the table does: two decimals below 100, one below 1000.
func FormatMs(v float64) string { return formatMs(v) }

// FormatPerRequest formats a cost per request as the table does: about three significant
// digits.
func FormatPerRequest(v float64) string { return formatPerRequest(v) }

// FormatShare formats a share (0..1) as a percentage as the table does: 18.9%, 100%.
func FormatShare(v float64) string { return formatShare(v) }

// FormatEfficiency formats an efficiency (a fraction of the calibrated rate) as the table does.
func FormatEfficiency(v float64) string { return formatRatio(v) }

// FormatSpread formats a spread as the table's cells do: "median (min–max)", the median alone
// when min and max read the same.
func FormatSpread(s results.Spread, format func(float64) string) string {
	return formatSpread(s, format)
}

// LoadText is a run's load as the table's load column shows it: "requests × concurrency", the
// rate of an open loop, and mark in parentheses.
func LoadText(r results.Run, mark string) string { return loadText(r, mark) }

// WaiterTables is the sorted list of tables with a max-waiters metric in m.
func WaiterTables(m map[string]results.Spread) []string { return waiterTables(m) }

// The table's marks: a metric that does not apply, a run verified and one that failed its
// verification.
const (
	MissingValue   = missingValue
	VerifiedMark   = verifiedMark
	UnverifiedMark = unverifiedMark
)
