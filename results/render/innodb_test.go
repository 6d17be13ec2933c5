package render

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

// innodbRun is run with the figures of a run on MariaDB instead of PostgreSQL's: redo per
// request, deadlocks and timeouts, the server's CPU; notRead leaves figures out.
func innodbRun(run results.Run, redoPerReq float64, deadlocks, timeouts int64, notRead map[string]string) results.Run {
	n := run.Load.CompletedRequests
	run.Database = &results.Database{RedoSource: "innodb_lsn_current", RedoBytes: int64(redoPerReq * float64(n)), CommitSource: "trx_rw_commits",
		XactCommit: n, ServerCPUSeconds: 0.00025 * float64(n), NotRead: notRead,
		InnoDB: &results.InnoDBStats{Deadlocks: deadlocks, LockWaitTimeouts: timeouts, DataFsyncs: n / 2}}
	run.Database.PerRequest = run.Database.Per(n)
	return run
}

// A report of runs on MariaDB shows its redo where PostgreSQL's shows WAL (the short table's
// column titled so, the findings, the baseline table's own column), its deadlocks and lock
// wait timeouts, and the server's CPU per request; a figure not read shows as missing.
func TestInnoDBFiguresShow(t *testing.T) {
	sync := innodbRun(resultstest.MakeRun(resultstest.SyncSpec()), 480, 3, 1, nil)
	compact := innodbRun(resultstest.MakeRun(resultstest.AsyncCompactSpec()), 120, 0, 0,
		map[string]string{"innodb.lock_wait_timeouts": "off"})
	rep := resultstest.NewReport(sync, compact)

	m := results.RunSpreads(sync)
	if _, ok := m[results.MetricWALBytesPerRequest]; ok {
		t.Error("a run on InnoDB has a WAL metric")
	}
	if m[results.MetricRedoBytesPerRequest].Median != 480 || m[results.MetricDeadlocks].Median != 3 || m[results.MetricLockWaitTimeouts].Median != 1 ||
		m[results.MetricServerCPUPerRequest].Median != 250 || m[results.MetricFsyncsPerRequest].Median != 0.5 {
		t.Errorf("metrics of a run on InnoDB: %v", m)
	}
	if _, ok := results.RunSpreads(compact)[results.MetricLockWaitTimeouts]; ok {
		t.Error("a figure not read is a metric")
	}

	table := Table([]*results.Report{rep})
	col := func(key string) int {
		return slices.IndexFunc(table.Columns, func(c Column) bool { return c.Key == key })
	}
	for _, c := range []struct {
		row       int
		key, want string
	}{
		{0, ColRedo, "480"}, {0, ColWAL, missingValue}, {0, ColDeadlocks, "3 / 1"}, {0, ColServerCPU, "250"},
		{1, ColRedo, "120"}, {1, ColDeadlocks, "0 / " + missingValue},
	} {
		if got := table.Rows[c.row].Cells[col(c.key)]; got != c.want {
			t.Errorf("row %d, %s: %q, want %q", c.row, c.key, got, c.want)
		}
	}

	var out bytes.Buffer
	Summary(&out, rep, SummaryOptions{HotTables: []string{"api_keys"}})
	s := out.String()
	if !strings.Contains(s, "redo/req") || strings.Contains(s, "WAL/req") || !strings.Contains(s, "480 B") {
		t.Errorf("the short table names the redo per request:\n%s", s)
	}
	if !strings.Contains(s, "redo per request 4.0× lower (120 B against 480 B)") {
		t.Errorf("the findings compare the redo:\n%s", s)
	}

	// PostgreSQL's and MariaDB's runs side by side: the column is the log, as the docs say.
	pg := resultstest.MakeRun(resultstest.AsyncCompactSpec())
	if got := logTitle(reportRows(resultstest.NewReport(sync, pg))); got != "log/req" {
		t.Errorf("title over WAL and redo %q, want log/req", got)
	}
}
