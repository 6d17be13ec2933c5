package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Off disables a threshold of Thresholds.
const Off = -1.0

// Thresholds decide when a new measurement regressed against an old one. Limits are fractions
// (0.10 is 10%) compared with the medians; a negative limit (Off) disables its check.
type Thresholds struct {
	// MaxThroughputDrop fails a pair whose throughput fell by more than this: 1 - new/old > limit.
	MaxThroughputDrop float64 `json:"max_throughput_drop"`
	// MaxP95Rise fails a pair whose p95 rose by more than this: new/old - 1 > limit.
	MaxP95Rise float64 `json:"max_p95_rise"`
	// MaxP99Rise is MaxP95Rise for p99.
	MaxP99Rise float64 `json:"max_p99_rise"`
	// NoNewWaiters fails a pair where a hot table whose max waiters was 0 now has waiters (and
	// where any lock had no waiters before and has some now).
	NoNewWaiters bool `json:"no_new_waiters"`
	// RequireVerified fails a pair whose new runs did not all pass verification.
	RequireVerified bool `json:"require_verified"`
}

// DefaultThresholds are the defaults of `baseline compare`: throughput may drop 10%, p95 may rise
// 20%, p99 is not checked.
func DefaultThresholds() Thresholds {
	return Thresholds{MaxThroughputDrop: 0.10, MaxP95Rise: 0.20, MaxP99Rise: Off}
}

// ParseLimit reads a threshold written as a percentage, "10%" or "10" (both 0.10), or "off".
func ParseLimit(s string) (float64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	if t == "off" || t == "none" {
		return Off, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("invalid limit %q: want a percentage such as 10%% or off", s)
	}
	return v / 100, nil
}

// FormatLimit writes a limit as ParseLimit reads it.
func FormatLimit(v float64) string {
	if v < 0 {
		return "off"
	}
	return strconv.FormatFloat(v*100, 'f', -1, 64) + "%"
}

// Verdicts of a Pair.
const (
	VerdictOK         = "ok"
	VerdictRegression = "regression"
)

// ErrNoMatch is returned (with the Comparison filled in) when no run of one report matches a
// run of the other, so there is nothing to compare.
var ErrNoMatch = errors.New("no run of the new report matches a run of the old one")

// Comparison is the outcome of Compare.
type Comparison struct {
	Suite      string     `json:"suite"`
	Thresholds Thresholds `json:"thresholds"`
	Pairs      []Pair     `json:"pairs"`
	// UnmatchedOld and UnmatchedNew describe the runs (or summaries) found on one side only.
	UnmatchedOld []Unmatched `json:"unmatched_old"`
	UnmatchedNew []Unmatched `json:"unmatched_new"`
	// Regressions counts the pairs whose verdict is VerdictRegression.
	Regressions int `json:"regressions"`
}

// Passed is true when no matched pair regressed.
func (c Comparison) Passed() bool { return c.Regressions == 0 }

// Unmatched is a run (or summary) of one report that no run of the other matches.
type Unmatched struct {
	Mode   string `json:"mode"`
	Level  int    `json:"level,omitempty"`
	Load   string `json:"load"`
	Config string `json:"config"`
	// Hint says how the other report's runs of the same mode and level differ, when it has any.
	Hint string `json:"hint,omitempty"`
}

// Pair is one matched run (or summary) of both reports and the verdict on it.
type Pair struct {
	Mode  string `json:"mode"`
	Level int    `json:"level,omitempty"`
	// Load is "requests × concurrency", Config the canonical config key both sides share.
	Load           string `json:"load"`
	Config         string `json:"config"`
	OldRepetitions int    `json:"old_repetitions"`
	NewRepetitions int    `json:"new_repetitions"`
	OldVerified    bool   `json:"old_verified"`
	NewVerified    bool   `json:"new_verified"`
	// Metrics are throughput, p95, p99, persist-lag p99 (queue runs), max lock waiters, then the
	// max waiters of every hot table that had any on either side.
	Metrics []MetricDelta `json:"metrics"`
	Verdict string        `json:"verdict"`
	// Reasons says which checks failed, one line each; empty when the verdict is ok.
	Reasons []string `json:"reasons,omitempty"`
}

// MetricDelta is one metric on both sides.
type MetricDelta struct {
	Metric string `json:"metric"`
	Old    Spread `json:"old"`
	New    Spread `json:"new"`
	// Ratio is New.Median / Old.Median; nil when the old median is 0 and the new one is not.
	Ratio *float64 `json:"ratio,omitempty"`
	// BandsOverlap is true when either side was repeated and the min–max bands of the two sides
	// overlap: the difference may be noise. The verdict still follows the thresholds.
	BandsOverlap bool `json:"bands_overlap,omitempty"`
	// Regressed is true when this metric broke a threshold; Limit names the threshold checked.
	Regressed bool   `json:"regressed,omitempty"`
	Limit     string `json:"limit,omitempty"`
}

// compareEntry is one side of a pair: the runs of a report that share a match key, summarised.
type compareEntry struct {
	key      string
	mode     string
	level    int
	load     string
	config   map[string]string
	reps     int
	verified bool
	metrics  map[string]Spread
}

// Compare matches the runs of old and new and judges every pair against th.
//
// Runs match when their mode, ladder level and config key are equal. The config key is every
// Config entry that shapes the run (requests, concurrency, and the rest), leaving out what does
// not: output paths and files, seeds, URLs, the repeat count, the ladder's level list and the
// mode list (see ignoredConfigKey). The runs of one report that share a key are summarised
// together; when the report has Summaries, the stored summary of that mode and level gives the
// metrics (median, min–max as the noise band), otherwise the runs do.
//
// Reports of different suites are an error. Runs found on one side only are listed in
// UnmatchedOld / UnmatchedNew; when nothing matches at all, the Comparison is returned with
// ErrNoMatch.
func Compare(old, new *Report, th Thresholds) (Comparison, error) {
	if old == nil || new == nil {
		return Comparison{}, errors.New("compare: missing report")
	}
	if old.Suite != new.Suite {
		return Comparison{}, fmt.Errorf("reports are of different suites: %q and %q", old.Suite, new.Suite)
	}
	c := Comparison{Suite: old.Suite, Thresholds: th}
	olds, news := compareEntries(old), compareEntries(new)
	newByKey := make(map[string]compareEntry, len(news))
	for _, e := range news {
		newByKey[e.key] = e
	}
	matched := make(map[string]bool)
	for _, o := range olds {
		n, ok := newByKey[o.key]
		if !ok {
			c.UnmatchedOld = append(c.UnmatchedOld, unmatched(o, news))
			continue
		}
		matched[o.key] = true
		p := comparePair(o, n, th)
		if p.Verdict == VerdictRegression {
			c.Regressions++
		}
		c.Pairs = append(c.Pairs, p)
	}
	for _, n := range news {
		if !matched[n.key] {
			c.UnmatchedNew = append(c.UnmatchedNew, unmatched(n, olds))
		}
	}
	if len(c.Pairs) == 0 {
		return c, ErrNoMatch
	}
	return c, nil
}

func compareEntries(rep *Report) []compareEntry {
	type group struct {
		entry compareEntry
		runs  []Run
	}
	var order []string
	groups := make(map[string]*group)
	for _, r := range rep.Runs {
		cfg := matchConfig(r.Config)
		key := matchKey(r.Mode, r.Level, cfg)
		g, ok := groups[key]
		if !ok {
			g = &group{entry: compareEntry{key: key, mode: r.Mode, level: r.Level, config: cfg,
				load: loadText(r, r.Level, false)}}
			groups[key] = g
			order = append(order, key)
		}
		g.runs = append(g.runs, r)
	}
	out := make([]compareEntry, 0, len(order))
	for _, key := range order {
		g := groups[key]
		s := summarizeGroup(g.entry.mode, g.entry.level, g.runs)
		for _, stored := range rep.Summaries {
			if stored.Mode == s.Mode && stored.Level == s.Level {
				for k, v := range stored.Metrics {
					s.Metrics[k] = v
				}
				s.Verified, s.Repetitions = stored.Verified, stored.Repetitions
				break
			}
		}
		e := g.entry
		e.metrics, e.verified, e.reps = s.Metrics, s.Verified, s.Repetitions
		out = append(out, e)
	}
	return out
}

// ignoredConfigKey reports whether a config entry does not shape the run and so is left out of
// the match key: the mode list, repeat count and ladder levels (matched otherwise or not at
// all), and any flag naming an output, file, path, directory, URL, DSN, seed, OS user or schema
// (where the tables live, not what they hold), or only changing what is printed.
func ignoredConfigKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "mode", "modes", "repeat", "repetitions", "levels", "help":
		return true
	}
	for _, tok := range strings.FieldsFunc(k, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		switch tok {
		case "output", "out", "file", "path", "dir", "url", "dsn", "seed", "progress", "verbose",
			"quiet", "cpuprofile", "memprofile", "samples", "user", "schema":
			return true
		}
	}
	return false
}

// matchConfig is the config entries that shape a run, each value in canonical JSON, so that an
// int in memory and a float64 read back from JSON compare equal.
func matchConfig(cfg map[string]any) map[string]string {
	out := make(map[string]string, len(cfg))
	for k, v := range cfg {
		if ignoredConfigKey(k) {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprint(v))
		}
		out[k] = string(b)
	}
	return out
}

func configText(cfg map[string]string) string {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + cfg[k]
	}
	return strings.Join(parts, " ")
}

func matchKey(mode string, level int, cfg map[string]string) string {
	return fmt.Sprintf("mode=%s level=%d %s", mode, level, configText(cfg))
}

// unmatched describes e, with a hint of how the other side's entries of the same mode and
// level differ in config.
func unmatched(e compareEntry, other []compareEntry) Unmatched {
	u := Unmatched{Mode: e.mode, Level: e.level, Load: e.load, Config: configText(e.config)}
	for _, o := range other {
		if o.mode != e.mode || o.level != e.level {
			continue
		}
		var diffs []string
		keys := make(map[string]bool)
		for k := range e.config {
			keys[k] = true
		}
		for k := range o.config {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			a, aok := e.config[k]
			b, bok := o.config[k]
			if a == b && aok == bok {
				continue
			}
			if !aok {
				a = "absent"
			}
			if !bok {
				b = "absent"
			}
			diffs = append(diffs, fmt.Sprintf("%s %s here, %s there", k, a, b))
		}
		u.Hint = "same mode and level on the other side differ in " + strings.Join(diffs, "; ")
		break
	}
	return u
}

func comparePair(o, n compareEntry, th Thresholds) Pair {
	p := Pair{Mode: o.mode, Level: o.level, Load: o.load, Config: configText(o.config),
		OldRepetitions: o.reps, NewRepetitions: n.reps, OldVerified: o.verified, NewVerified: n.verified}
	repeated := o.reps > 1 || n.reps > 1
	delta := func(metric string) (MetricDelta, bool) {
		os, ook := o.metrics[metric]
		ns, nok := n.metrics[metric]
		if !ook && !nok {
			return MetricDelta{}, false
		}
		d := MetricDelta{Metric: metric, Old: os, New: ns}
		if r, ok := ratio(os.Median, ns.Median); ok {
			d.Ratio = &r
		}
		d.BandsOverlap = repeated && ook && nok && os.Min <= ns.Max && ns.Min <= os.Max
		return d, true
	}
	fail := func(d *MetricDelta, limit, reason string) {
		d.Regressed, d.Limit = true, limit
		p.Reasons = append(p.Reasons, reason)
	}

	if d, ok := delta(MetricThroughputRPS); ok {
		if lim := th.MaxThroughputDrop; lim >= 0 && d.Old.Median > 0 {
			d.Limit = "drop ≤ " + FormatLimit(lim)
			if drop := 1 - d.New.Median/d.Old.Median; drop > lim+1e-9 {
				fail(&d, d.Limit, fmt.Sprintf("throughput dropped %s (limit %s)%s", pct(drop), FormatLimit(lim), noiseNote(d)))
			}
		}
		p.Metrics = append(p.Metrics, d)
	}
	for _, c := range []struct {
		metric, name string
		lim          float64
	}{{MetricP95Ms, "p95", th.MaxP95Rise}, {MetricP99Ms, "p99", th.MaxP99Rise}} {
		d, ok := delta(c.metric)
		if !ok {
			continue
		}
		if c.lim >= 0 && d.Old.Median > 0 {
			d.Limit = "rise ≤ " + FormatLimit(c.lim)
			if rise := d.New.Median/d.Old.Median - 1; rise > c.lim+1e-9 {
				fail(&d, d.Limit, fmt.Sprintf("%s rose %s (limit %s)%s", c.name, pct(rise), FormatLimit(c.lim), noiseNote(d)))
			}
		}
		p.Metrics = append(p.Metrics, d)
	}
	if d, ok := delta(MetricPersistLagP99Ms); ok {
		p.Metrics = append(p.Metrics, d)
	}

	var newWaiterTables []string
	tables := waiterTables(o.metrics)
	for _, t := range waiterTables(n.metrics) {
		if _, ok := o.metrics[MetricMaxWaitersPrefix+t]; !ok {
			tables = append(tables, t)
		}
	}
	sort.Strings(tables)
	var tableDeltas []MetricDelta
	for _, t := range tables {
		d, _ := delta(MetricMaxWaitersPrefix + t)
		if d.Old.Median == 0 && d.New.Median == 0 {
			continue
		}
		if th.NoNewWaiters && d.Old.Median == 0 && d.New.Median > 0 {
			fail(&d, "no new waiters", fmt.Sprintf("new lock waiters on %s: 0 → %s", t, formatCount(d.New.Median)))
			newWaiterTables = append(newWaiterTables, t)
		}
		tableDeltas = append(tableDeltas, d)
	}
	if d, ok := delta(MetricMaxLockWaiters); ok {
		if th.NoNewWaiters && len(newWaiterTables) == 0 && d.Old.Median == 0 && d.New.Median > 0 {
			fail(&d, "no new waiters", fmt.Sprintf("new lock waiters: 0 → %s", formatCount(d.New.Median)))
		}
		p.Metrics = append(p.Metrics, d)
	}
	p.Metrics = append(p.Metrics, tableDeltas...)

	if th.RequireVerified && !n.verified {
		p.Reasons = append(p.Reasons, "verification failed in the new report")
	}
	p.Verdict = VerdictOK
	if len(p.Reasons) > 0 {
		p.Verdict = VerdictRegression
	}
	return p
}

func noiseNote(d MetricDelta) string {
	if d.BandsOverlap {
		return "; the noise bands overlap"
	}
	return ""
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// metricLabel names a metric in the comparison text.
func metricLabel(metric string) (label string, format func(float64) string) {
	switch metric {
	case MetricThroughputRPS:
		return "throughput rps", formatRPS
	case MetricP95Ms:
		return "p95 ms", formatMs
	case MetricP99Ms:
		return "p99 ms", formatMs
	case MetricPersistLagP99Ms:
		return "persist-lag p99 ms", formatMs
	case MetricMaxLockWaiters:
		return "max lock waiters", formatCount
	}
	if t, ok := strings.CutPrefix(metric, MetricMaxWaitersPrefix); ok {
		return "  waiters " + t, formatCount
	}
	return metric, formatCount
}

// RenderComparison writes a comparison for people: one block per matched pair, a line per
// metric (old → new, ratio, the limit checked and whether it held, and whether the noise bands
// overlap), the unmatched runs, and the overall verdict.
func RenderComparison(w io.Writer, c Comparison) error {
	var b strings.Builder
	th := c.Thresholds
	fmt.Fprintf(&b, "compare %s: %d matched, %d only in old, %d only in new\n",
		c.Suite, len(c.Pairs), len(c.UnmatchedOld), len(c.UnmatchedNew))
	fmt.Fprintf(&b, "thresholds: throughput drop %s, p95 rise %s, p99 rise %s, no new waiters %s, require verified %s\n",
		limitText(th.MaxThroughputDrop), limitText(th.MaxP95Rise), limitText(th.MaxP99Rise), onOff(th.NoNewWaiters), onOff(th.RequireVerified))
	for _, p := range c.Pairs {
		b.WriteString("\n")
		mode := p.Mode
		if p.Level > 0 {
			mode = fmt.Sprintf("%s @%d", p.Mode, p.Level)
		}
		fmt.Fprintf(&b, "%s · %s · old n=%d, new n=%d: %s\n", mode, p.Load, p.OldRepetitions, p.NewRepetitions, strings.ToUpper(p.Verdict))
		var block strings.Builder
		tw := tabwriter.NewWriter(&block, 0, 0, 2, ' ', 0)
		for _, d := range p.Metrics {
			label, format := metricLabel(d.Metric)
			r := "new"
			if d.Ratio != nil {
				r = "×" + strconv.FormatFloat(*d.Ratio, 'f', 2, 64)
			}
			check := ""
			switch {
			case d.Regressed:
				check = "FAIL " + d.Limit
			case d.Limit != "":
				check = "ok " + d.Limit
			}
			if d.BandsOverlap {
				check = strings.TrimSpace(check + " (noise bands overlap)")
			}
			fmt.Fprintf(tw, "  %s\t%s → %s\t%s\t%s\n", label, formatSpread(d.Old, format), formatSpread(d.New, format), r, check)
		}
		check := ""
		if th.RequireVerified {
			check = "required"
		}
		fmt.Fprintf(tw, "  verified\t%s → %s\t\t%s\n", mark(p.OldVerified), mark(p.NewVerified), check)
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSuffix(block.String(), "\n"), "\n") {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
		for _, r := range p.Reasons {
			fmt.Fprintf(&b, "  ✗ %s\n", r)
		}
	}
	for _, side := range []struct {
		name string
		list []Unmatched
	}{{"old", c.UnmatchedOld}, {"new", c.UnmatchedNew}} {
		for _, u := range side.list {
			mode := u.Mode
			if u.Level > 0 {
				mode = fmt.Sprintf("%s @%d", u.Mode, u.Level)
			}
			fmt.Fprintf(&b, "\nonly in %s: %s · %s · %s\n", side.name, mode, u.Load, u.Config)
			if u.Hint != "" {
				fmt.Fprintf(&b, "  %s\n", u.Hint)
			}
		}
	}
	verdict := "PASS"
	if !c.Passed() {
		verdict = fmt.Sprintf("REGRESSION (%d of %d pairs)", c.Regressions, len(c.Pairs))
	}
	fmt.Fprintf(&b, "\nverdict: %s\n", verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

func limitText(v float64) string {
	if v < 0 {
		return "off"
	}
	return "≤ " + FormatLimit(v)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func mark(ok bool) string {
	if ok {
		return verifiedMark
	}
	return unverifiedMark
}

// ratio is b/a, with ok false when a is 0 (and b is not), where no ratio exists.
func ratio(a, b float64) (float64, bool) {
	switch {
	case a == 0 && b == 0:
		return 1, true
	case a == 0:
		return math.Inf(1), false
	}
	return b / a, true
}
