package render

// What package plot (results/render/plot) draws with of the table's formatting.

// FormatRPS formats a rate as the table does: whole, thousands grouped.
func FormatRPS(v float64) string { return formatRPS(v) }

// SpreadSep separates a spread cell's median from its range: "median (min–max)".
const SpreadSep = spreadSep

// FormatMs formats milliseconds as the table does: two decimals below 100, one below 1000.
func FormatMs(v float64) string { return formatMs(v) }
