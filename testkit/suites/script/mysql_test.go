package script_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestMySQLExamples: the examples written in MySQL's SQL, on MariaDB, in every mode: every
// balance exact, every ledger and history row there once, lost 0, duplicated 0.
func TestMySQLExamples(t *testing.T) {
	for _, name := range []string{"mysql/tpcb-like.sql", "mysql/wallet-debit.sql"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			t.Parallel()
			rep := verifiedEveryModeBy(t, suitetest.RunMySQL, append(example(t, name), "--requests", "300", "--concurrency", "16")...)
			for _, r := range rep.Runs {
				if !hasCheck(r, "reconciliation: lost") {
					t.Errorf("%s: no reconciliation among %v", r.Mode, checkNames(r))
				}
			}
		})
	}
}

// TestMySQLGrammarRefusals: a script command MySQL's grammar rejects, on a MySQL run, is one
// line naming the file and the command's line, exit 2, before any server starts (no
// --mysql-url: a temporary MariaDB would start); a PostgreSQL form says it is one. The same
// file on PostgreSQL is judged by PostgreSQL's grammar.
func TestMySQLGrammarRefusals(t *testing.T) {
	file := fileWriter(t)
	for _, c := range []struct {
		file, database, want string
	}{
		{file("broken.sql", "\\set d random(1, 5)\nSTART TRANSACTION;\nUPDATE t SET\n  WHERE id = :d;\nCOMMIT;\n"), "mariadb",
			`broken.sql: line 4: MySQL's grammar rejects it near "WHERE id = ?"`},
		{file("cast.sql", "\\set d random(1, 5)\nUPDATE t SET n = n + :d::int WHERE id = 1;\n"), "mariadb",
			`cast.sql: line 2: MySQL's grammar rejects it near "::int WHERE id = 1"; PostgreSQL's grammar takes it`},
		{file("upsert.sql", "INSERT INTO t (id) VALUES (:request_id)\n  ON CONFLICT DO NOTHING;\n"), "mariadb",
			`upsert.sql: line 2: MySQL's grammar rejects it near "CONFLICT DO NOTHING"; PostgreSQL's grammar takes it`},
		{file("end.sql", "BEGIN;\nUPDATE t SET n = n + 1 WHERE id = 1;\nEND;\n"), "mariadb",
			`end.sql: line 3: MySQL's grammar rejects it near "END"; PostgreSQL's grammar takes it`},
		{file("backquote.sql", "UPDATE `t` SET n = n + 1 WHERE id = 1;\n"), "postgres",
			"backquote.sql: line 1: "},
	} {
		var stdout, stderr strings.Builder
		code := cli.Execute(script.New(), []string{"-f", c.file, "--database", c.database}, &stdout, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if code != cli.ExitUsage || !strings.Contains(first, c.want) {
			t.Errorf("%s on %s: exit %d, stderr %q; want 2 and one line with %q", filepath.Base(c.file), c.database, code,
				stderr.String(), c.want)
		}
	}
}
