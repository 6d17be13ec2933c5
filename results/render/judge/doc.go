// Package judge judges reports against each other, and writes the verdicts for people and as
// JSON: the comparison of two reports (`baseline compare`: their runs matched, each pair's
// metrics against thresholds, or by statistics with enough repetitions) and the A/B of two builds
// or settings of one suite (`baseline ab`). The statistics are package verdict's, which links
// golang.org/x/perf: only the baseline tool imports this package, so that no suite binary links
// them. The figures are written as render's table writes them.
package judge
