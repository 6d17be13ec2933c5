package pgscript

import (
	"os"
	"path/filepath"
	"testing"
)

func benchmarkEval(b *testing.B, script string, defines ...Define) {
	s, err := Parse(script)
	if err != nil {
		b.Fatal(err)
	}
	p, err := s.Bind(Env{Seed: 1, Clients: 64, Defines: defines})
	if err != nil {
		b.Fatal(err)
	}
	var x Execution
	i := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Eval(i, &x); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func tpcbLike(b *testing.B) string {
	text, err := os.ReadFile(filepath.Join("testdata", "tpcb-like.sql"))
	if err != nil {
		b.Fatal(err)
	}
	return string(text)
}

// One request of pgbench's TPC-B-like transaction: four random draws, seven statements.
func BenchmarkEvalTPCBLike(b *testing.B) {
	benchmarkEval(b, tpcbLike(b), Define{"scale", "1"})
}

// The same with YCSB's skew on the account.
func BenchmarkEvalTPCBLikeZipfian099(b *testing.B) {
	benchmarkEval(b, `\set aid random_zipfian(1, 100000 * :scale, 0.99)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;`, Define{"scale", "10"})
}

// Conditionals, CASE, hash and permute on every request.
func BenchmarkEvalBranchy(b *testing.B) {
	benchmarkEval(b, `\set r random(1, 1000)
\set k 1 + permute(:r, 1000)
\set h abs(hash(:k)) % 16
\if :h < 8
UPDATE t SET n = n + 1 WHERE k = :k;
\elif :h < 12
UPDATE t SET n = n + 2 WHERE k = :k;
\else
\set v CASE WHEN :r % 2 = 0 THEN :r * 2 ELSE :r END
UPDATE t SET n = n + :v WHERE k = :k;
\endif`)
}

func BenchmarkParseAndBindTPCBLike(b *testing.B) {
	text := tpcbLike(b)
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(text)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Bind(Env{Seed: 1, Clients: 64, Defines: []Define{{"scale", "1"}}}); err != nil {
			b.Fatal(err)
		}
	}
}
