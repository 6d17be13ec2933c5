package dbstats

import (
	"testing"
)

// TestDelta: counters are differenced, the observers' own transactions subtracted, a statement
// evicted and re-added counts whole, transaction control is not a statement, tables without
// writes are left out unless hot, and the figures are divided per request.
func TestDelta(t *testing.T) {
	r := &Reader{version: 150000}
	start := Snapshot{WALBytes: 1000, WALRecords: 10, XactCommit: 100, Sessions: 40, Autovacuums: 3, readerTransactions: 7,
		Statements: map[string]Statement{
			"1": {Query: "UPDATE api_keys …", Calls: 50, Rows: 50, TotalMs: 5},
			"2": {Query: "INSERT INTO usage …", Calls: 900, Rows: 900, TotalMs: 90}, // evicted since
		},
		Tables: map[string]tableCounters{"api_keys": {updated: 10, hotUpdated: 9}, "users": {inserted: 3}},
	}
	end := Snapshot{WALBytes: 41000, WALRecords: 410, XactCommit: 221, Sessions: 46, Autovacuums: 5, readerTransactions: 10,
		Statements: map[string]Statement{
			"1": {Query: "UPDATE api_keys …", Calls: 150, Rows: 150, TotalMs: 25},
			"2": {Query: "INSERT INTO usage …", Calls: 100, Rows: 100, TotalMs: 10},
		},
		Tables: map[string]tableCounters{
			"api_keys":  {updated: 110, hotUpdated: 89, dead: 7},
			"usage":     {inserted: 100},
			"users":     {inserted: 3},
			"providers": {},
		},
	}
	d := r.Delta(start, end, Inputs{Requests: 100, HotTables: []string{"api_keys", "providers"},
		ObserverTransactions: 12})
	if d.WALBytes != 40000 || d.WALRecords != 400 || d.WALSource != "pg_stat_wal" {
		t.Errorf("WAL: %+v", d)
	}
	if d.XactCommit != 100 || d.Sessions != 6 { // 121 - 3 (reader) - 12 (monitor) - 6 (sessions' startups)
		t.Errorf("commits %d, sessions %d: want 100 and 6", d.XactCommit, d.Sessions)
	}
	if d.Autovacuums != 2 { // counted beside the commits, not out of them
		t.Errorf("autovacuums %d, want 2", d.Autovacuums)
	}
	// Before PostgreSQL 14 there is no session count: the startups stay in.
	if old := (&Reader{version: 130000}).Delta(start, end, Inputs{Requests: 100, ObserverTransactions: 12}); old.XactCommit != 106 || old.Sessions != 0 {
		t.Errorf("PostgreSQL 13: commits %d, sessions %d: want 106 and none", old.XactCommit, old.Sessions)
	}
	if d.Statements.Calls != 200 || d.Statements.Top[0].Query != "UPDATE api_keys …" || d.Statements.Top[0].MeanMs != 0.2 {
		t.Errorf("statements: %+v", d.Statements)
	}
	if _, ok := d.Tables["users"]; ok {
		t.Errorf("users was not written in the run: %v", d.Tables)
	}
	if _, ok := d.Tables["providers"]; !ok {
		t.Errorf("hot table providers missing: %v", d.Tables)
	}
	if a := d.Tables["api_keys"]; a.Updated != 100 || a.HotUpdated != 80 || a.DeadTuples != 7 {
		t.Errorf("api_keys: %+v", a)
	}
	p := d.PerRequest
	if p.WALBytes != 400 || p.Commits != 1 || p.Statements != 2 || p.RowVersions != 2 || p.HOTUpdateRatio["api_keys"] != 0.8 {
		t.Errorf("per request: %+v", p)
	}
	if _, ok := p.HOTUpdateRatio["providers"]; ok {
		t.Errorf("providers was not updated, yet has a HOT ratio: %v", p.HOTUpdateRatio)
	}
}

func TestNotWork(t *testing.T) {
	for q, skip := range map[string]bool{
		"BEGIN": true, "commit": true, "SAVEPOINT sp": true, "release savepoint sp": true,
		"SET search_path = x": true, "SELECT count(*) FROM pg_stat_activity": true,
		"UPDATE api_keys SET n = n + $1": false, `copy "usage" ( "request_id" ) from stdin binary`: false,
		"INSERT INTO settings_log VALUES ($1)": false, "  END": true, "SELECT * FROM ending": false,
	} {
		if notWork := IsControl(q) || observing.MatchString(q); notWork != skip {
			t.Errorf("%q: skipped %v, want %v", q, !skip, skip)
		}
	}
}

// TestServerTimes: every statement's calls and time over the window, transaction control
// included (a COMMIT's time is its WAL flush), summed per text; an entry evicted and re-added
// counts whole; none without pg_stat_statements.
func TestServerTimes(t *testing.T) {
	start := Snapshot{Statements: map[string]Statement{
		"1": {Query: "UPDATE api_keys …", Calls: 50, TotalMs: 5},
		"2": {Query: "commit", Calls: 10, TotalMs: 1, Control: true},
		"3": {Query: "INSERT INTO usage …", Calls: 900, TotalMs: 90},
	}}
	end := Snapshot{Statements: map[string]Statement{
		"1": {Query: "UPDATE api_keys …", Calls: 150, TotalMs: 25},
		"2": {Query: "commit", Calls: 110, TotalMs: 51, Control: true},
		"3": {Query: "INSERT INTO usage …", Calls: 100, TotalMs: 10},
		"4": {Query: "UPDATE api_keys …", Calls: 5, TotalMs: 1}, // the same text, another queryid
	}}
	got := ServerTimes(start, end)
	want := map[string]Timed{"UPDATE api_keys …": {105, 21}, "commit": {100, 50}, "INSERT INTO usage …": {100, 10}}
	for q, w := range want {
		if g := got[q]; g.Calls != w.Calls || g.TotalMs != w.TotalMs {
			t.Errorf("%s: %+v, want %+v", q, g, w)
		}
	}
	if ServerTimes(Snapshot{}, end) != nil {
		t.Error("server times without pg_stat_statements at the start")
	}
}
