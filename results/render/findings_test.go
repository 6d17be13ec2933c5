package render

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/recordstest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

// The usage-counter suite's hot tables (testkit/suites/usagecounter's Info).
var counterHotTables = []string{"api_keys", "provider_api_keys", "global_models", "providers"}

var allModes = []string{"sync", "outbox", "async", "async-compact"}

func readReport(t *testing.T, path string) *results.Report {
	t.Helper()
	rep, err := results.ReadFile(recordstest.Path(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The findings of the recorded counter baseline state what its JSON holds: the medians of its
// three repetitions, the waiters of sync on api_keys, the WAL per request, the lag, the count.
func TestFindingsOfTheCounterBaseline(t *testing.T) {
	rep := readReport(t, "baselines/linux-amd64-2cpu-24gib/usage_counter_hotspot_baseline.json")
	got := Findings(rep, counterHotTables)
	want := []string{
		"async-compact: 85× sync's throughput (70,997 against 836 requests/s), lock waiters on api_keys 63 → 0, WAL per request 3.4× lower (233 B against 792 B), persist lag p99 800 ms",
		"outbox: 5.9× sync's throughput (4,937 against 836 requests/s), lock waiters on api_keys 63 → 0, WAL per request 3.6× higher (2.82 kB against 792 B)",
		"async: 3.9× sync's throughput (3,222 against 836 requests/s), lock waiters on api_keys 63 → 0, WAL per request 1.3× lower (606 B against 792 B), persist lag p99 18.6 s",
		"all 60,000 writes verified exactly once in every run",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The same figures, worked out from the runs.
	median := func(mode string, f func(results.Run) float64) float64 {
		var vs []float64
		for _, r := range rep.Runs {
			if r.Mode == mode {
				vs = append(vs, f(r))
			}
		}
		return results.SpreadOf(vs).Median
	}
	rps := func(r results.Run) float64 { return r.Load.ThroughputRPS }
	if ratio := median("async-compact", rps) / median("sync", rps); FormatRatio(ratio) != "85×" {
		t.Errorf("async-compact / sync throughput from the runs: %v", ratio)
	}
	waiters := func(r results.Run) float64 { return float64(r.LockMonitor.MaxWaitersByRelation["api_keys"]) }
	if median("sync", waiters) != 63 || median("async-compact", waiters) != 0 {
		t.Errorf("api_keys waiters from the runs: sync %v, async-compact %v", median("sync", waiters), median("async-compact", waiters))
	}
	for _, r := range rep.Runs {
		if rc := r.Reconciliation; !r.Verification.Passed || rc.Persisted != 60000 || rc.Lost != 0 || rc.Duplicated != 0 {
			t.Errorf("%s: verified %v, reconciliation %+v", r.Mode, r.Verification.Passed, rc)
		}
	}
}

// Runs of different lengths (a duration-bound sync) are counted one by one; a failed check
// or a lost write leaves the verification finding out (the warnings and checks say it).
func TestVerifiedFinding(t *testing.T) {
	rep := readReport(t, "baselines/linux-amd64-2cpu-24gib/usage_counter_hotspot_baseline.json")
	runs := slices.Clone(rep.Runs[:4:4])
	for i := range runs {
		rc := *runs[i].Reconciliation
		runs[i].Reconciliation = &rc
	}
	runs[0].Reconciliation.Persisted = 812
	runs[3].Mode = "outbox"
	if got, want := verifiedFinding(runs), "every write verified exactly once in every run (sync 812, sync #2 60,000, sync #3 60,000, outbox 60,000)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := verifiedFinding(runs[:1]); got != "all 812 writes verified exactly once" {
		t.Errorf("one run: %q", got)
	}
	runs[1].Reconciliation.Lost = 1
	if got := verifiedFinding(runs); got != "" {
		t.Errorf("a lost write: %q", got)
	}
}

func TestWarnings(t *testing.T) {
	for _, tt := range []struct {
		report string
		want   string
	}{
		{"runs/faults/async-compact-pause-flush-full.json", "the queue overflowed (--queue-capacity 10000, --queue-full sync): async-compact wrote 8527 records inline on the hot rows"},
		{"runs/faults/async-compact-pause-flush-drop.json", "async-compact dropped 49999 records"},
		{"runs/faults/sync-restart-postgres.json", "sync failed 4,495 of "},
		{"baselines/linux-amd64-2cpu-24gib/usage_counter_hotspot_baseline.json", "the calibration was noisy (1 of its 3 rates varied up to 1.7× between windows)"},
	} {
		got := strings.Join(Warnings(readReport(t, tt.report), allModes), "\n")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: warnings %q lack %q", tt.report, got, tt.want)
		}
	}
	rep := readReport(t, "runs/usage_counter_rate_ladder.json")
	rep.Runs[0].Load.OpenLoop.HeldRate = false
	if got := strings.Join(Warnings(rep, allModes), "\n"); !strings.Contains(got, "could not hold --rate") {
		t.Errorf("a rate not held: %q", got)
	}
	rep = readReport(t, "baselines/linux-amd64-2cpu-24gib/usage_counter_hotspot_baseline.json")
	rep.Environment.Calibration = nil
	if got := Warnings(rep, allModes); len(got) != 0 {
		t.Errorf("a clean report warns: %q", got)
	}
	rep.Runs[0].Leftover = &results.Leftover{GoroutinesBefore: 20, GoroutinesAfter: 20 + results.LeftoverGoroutineSlack, OpenConnsBefore: 4, OpenConnsAfter: 4}
	if got := Warnings(rep, allModes); len(got) != 0 {
		t.Errorf("goroutines within the slack, no connection left: %q", got)
	}
	rep.Runs[0].Leftover.OpenConnsAfter = 5
	if got := strings.Join(Warnings(rep, allModes), "\n"); !strings.Contains(got, "left 3 goroutines and 1 TCP connections open") {
		t.Errorf("a connection left open: %q", got)
	}
}

// zeroShown is a figure rounded to nothing: 0.00 (not 0.008).
var zeroShown = regexp.MustCompile(`\b0\.00(\D|$)`)

// Every committed report's default summary fits SummaryWidth columns and never shows a
// latency as 0.00; --wide is the table of `baseline table`.
func TestSummaryFitsAndWide(t *testing.T) {
	for _, path := range recordstest.Reports(t, ".json") {
		rep, err := results.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var short bytes.Buffer
		Summary(&short, rep, SummaryOptions{Modes: allModes})
		for _, line := range strings.Split(short.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > SummaryWidth {
				t.Errorf("%s: a line of %d columns: %q", path, n, line)
			}
		}
		if zeroShown.MatchString(short.String()) { // 0.00, not 0.008
			t.Errorf("%s: the summary shows 0.00:\n%s", path, short.String())
		}
		var wide, table bytes.Buffer
		Summary(&wide, rep, SummaryOptions{Modes: allModes, Wide: true})
		_ = RenderMarkdown(&table, Table([]*results.Report{rep}))
		if len(rep.Runs) > 0 && !strings.Contains(wide.String(), table.String()) {
			t.Errorf("%s: --wide lacks the table of baseline table", path)
		}
	}
}

// A summary says when the temporary server's data was on tmpfs, where durability "on" costs no
// disk write, and says nothing more on a disk.
func TestSummarySaysDataInMemory(t *testing.T) {
	rep, err := results.ReadFile(recordstest.Reports(t, ".json")[0])
	if err != nil {
		t.Fatal(err)
	}
	rep.Environment.Durability = "on"
	for fs, want := range map[string]string{
		"tmpfs": "durability on (data on tmpfs: fsync costs nothing),",
		"ext4":  "durability on, ",
		"":      "durability on, ",
	} {
		rep.Environment.DatabaseDataFS = fs
		for _, wide := range []bool{false, true} {
			var out bytes.Buffer
			Summary(&out, rep, SummaryOptions{Modes: allModes, Wide: wide})
			if got := out.String(); !strings.Contains(got, want) {
				t.Errorf("data on %q, wide %v: want %q in\n%s", fs, wide, want, got)
			}
		}
	}
}

func TestAdaptingUnits(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{FormatDuration(0), "<1 µs"}, {FormatDuration(0.001), "1 µs"}, {FormatDuration(0.013), "13 µs"},
		{FormatDuration(0.691), "691 µs"}, {FormatDuration(1.778), "1.78 ms"}, {FormatDuration(194.4), "194 ms"},
		{FormatDuration(799.743), "800 ms"}, {FormatDuration(5597), "5.60 s"}, {FormatDuration(18579), "18.6 s"},
		{FormatDuration(1234567), "1,235 s"},
		{FormatBytes(766), "766 B"}, {FormatBytes(2638), "2.64 kB"}, {FormatBytes(13.1e6), "13.1 MB"},
		{FormatRatio(222.4), "222×"}, {FormatRatio(3.42), "3.4×"}, {FormatRatio(1.08), "1.08×"}, {FormatRatio(1234), "1,234×"},
		{FormatCount(60000), "60,000"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("- async-compact: 85× sync's throughput, lock waiters on api_keys 63 → 0, WAL per request 3.4× lower\n", 40)
	want := "- async-compact: 85× sync's throughput,\n    lock waiters on api_keys 63 → 0,\n    WAL per request 3.4× lower\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// An RTT ladder's rows, findings and ladder lines say at which round trip each run ran: the
// findings compare modes at the baseline's round trip only, and a queue mode's rung shows its
// persist lag, never a 0.00 enqueue p99.
func TestRTTLadderSummary(t *testing.T) {
	rep := readReport(t, "runs/usage_counter_rtt_ladder.json")
	var out bytes.Buffer
	Summary(&out, rep, SummaryOptions{Modes: allModes})
	s := out.String()
	for _, want := range []string{"sync @ 0 ", "sync @ 1ms ", "async-compact @ 2ms ",
		"async-compact @ 0: ", "sync RTT ladder: 0 (measured ", "1ms (measured 1.74 ms) → 86 rps (0.36×), p99 3.06 s",
		"lag p99 255 ms"} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "round trip p50 / p99: PostgreSQL") {
		t.Errorf("the header gives one round trip for a ladder of them:\n%s", s)
	}
	for _, f := range Findings(rep, nil) {
		if label, _, _ := strings.Cut(f, ":"); strings.Contains(f, "sync's throughput") && !strings.HasSuffix(label, " @ 0") {
			t.Errorf("a finding compares another round trip with sync's at loopback: %q", f)
		}
	}
}

// A split run's consumer runs no load of its own: its summary's first line says so, instead
// of the load flags' defaults ("2,000 requests × 100 workers") it was given.
func TestConsumerSummaryNamesNoLoad(t *testing.T) {
	for file, want := range map[string]string{
		"runs/cluster/acc6-c1.json": "a split run's consumer (its load is the producers')\n",
		"runs/cluster/acc6-c2.json": "a split run's consumer (its load is the producers'), verifying\n",
		"runs/cluster/acc6-p0.json": "60,000 requests × 1,000 workers\n",
	} {
		rep, err := results.ReadFile(recordstest.Path(t, file))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		Summary(&b, rep, SummaryOptions{Modes: allModes})
		if !strings.Contains(b.String(), rep.Suite+": "+want) {
			t.Errorf("%s: the summary does not begin %q:\n%s", file, want, b.String())
		}
	}
}

// A report of skewed hot keys says under either table which distribution, the share the
// hottest set took beside the distribution's, and each queue mode's writes per UPDATE; a
// report of uniform keys (every committed one) says nothing of it.
func TestSummaryOfSkewedHotKeys(t *testing.T) {
	rep := readReport(t, "baselines/linux-amd64-2cpu-24gib/usage_counter_hotspot_baseline.json")
	for _, wide := range []bool{false, true} {
		var out bytes.Buffer
		Summary(&out, rep, SummaryOptions{Modes: allModes, HotTables: counterHotTables, Wide: wide})
		if strings.Contains(out.String(), "hot keys") {
			t.Errorf("a uniform report speaks of hot keys:\n%s", out.String())
		}
	}
	for i := range rep.Runs {
		r := &rep.Runs[i]
		r.Config.HotKeys, r.Config.HotKeyDist = 100, "zipf:0.99"
		r.HotSets = &results.HotSets{Requests: 60000, HottestShare: 0.1893, ExpectedHottestShare: 0.1918}
	}
	rep.Runs[0].HotSets.HottestShare = 0.1875 // a run cut short by --duration applied fewer
	rows := reportRows(rep)
	var merged []string
	for _, row := range rows {
		if v, ok := row.Metrics[results.MetricWritesPerUpdate]; ok {
			merged = append(merged, row.Mode+" "+formatPerRequest(v.Median))
		}
	}
	if len(merged) != 2 || !strings.HasPrefix(merged[0], "async ") || merged[0] != "async 1.00" {
		t.Fatalf("the committed baseline's writes per UPDATE: %v, want async 1.00 and async-compact's", merged)
	}
	want := "hot keys zipf:0.99 over 100: the hottest took 18.8%–18.9% of the writes (the distribution: 19.2%); writes per UPDATE: " +
		strings.Join(merged, ", ")
	for _, wide := range []bool{false, true} {
		var out bytes.Buffer
		Summary(&out, rep, SummaryOptions{Modes: allModes, HotTables: counterHotTables, Wide: wide})
		if got := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(got, want) {
			t.Errorf("wide %v: want %q in\n%s", wide, want, out.String())
		}
	}
	if cell := cellsByTitle(t, Table([]*results.Report{rep}), 0)["hottest share"]; cell != "18.9% (18.8%–18.9%)" {
		t.Errorf("hottest share cell %q", cell)
	}
}

// On a ladder over the database's kinds each kind's modes are measured against its own sync,
// never against the other kind's, and the table puts the kinds side by side under each mode.
func TestFindingsPerKind(t *testing.T) {
	rep := resultstest.SingleReport()
	var runs []results.Run
	for _, kind := range []string{"mariadb", "postgres"} {
		for _, r := range rep.Runs {
			r.Config.Ladder = map[string][]results.Value{results.AxisDatabase.Name: {results.Text("mariadb"), results.Text("postgres")}}
			results.AxisDatabase.Set(&r.Config, results.Text(kind))
			r.Config = r.Config.Canonical()
			if kind == "postgres" {
				r.Load.ThroughputRPS *= 2
			}
			runs = append(runs, r)
		}
	}
	rep.Runs = runs
	var got []string
	for _, f := range Findings(rep, counterHotTables) {
		if strings.Contains(f, "sync's throughput") {
			got = append(got, f)
		}
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "async-compact on MariaDB: 76× sync's throughput (160,000 against 2,100") ||
		!strings.HasPrefix(got[1], "async-compact on PostgreSQL: 76× sync's throughput (320,000 against 4,200") {
		t.Errorf("findings per kind:\n%s", strings.Join(got, "\n"))
	}
	var order []string
	for _, r := range Table([]*results.Report{rep}).Rows {
		order = append(order, r.Cells[1])
	}
	if want := []string{"sync on MariaDB", "sync on PostgreSQL", "async-compact on MariaDB", "async-compact on PostgreSQL"}; !slices.Equal(order, want) {
		t.Errorf("rows %q, want %q", order, want)
	}
}

// A short table squeezed by long labels (a rate ladder on MariaDB) keeps the waiters' numbers
// and drops their tables' names, which the detail line below gives.
func TestSqueezedWaitersKeepTheirNumbers(t *testing.T) {
	rep, err := results.ReadFile(recordstest.Path(t, "runs/mysql/rates_counter_mariadb.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Summary(&out, rep, SummaryOptions{Modes: allModes})
	var rows int
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.Contains(line, " on MariaDB @ ") || !strings.HasSuffix(line, verifiedMark) {
			continue
		}
		rows++
		cells := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		if len(cells) != len(shortTitles) || !regexp.MustCompile(`^[\d,.]+$`).MatchString(cells[waitersColumn]) {
			t.Errorf("the waiters cell of %q is not a number: %q", line, cells)
		}
	}
	if rows != len(rep.Runs) {
		t.Errorf("%d table rows for %d runs:\n%s", rows, len(rep.Runs), out.String())
	}
}
