package sqlshape

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

// fixtureSQL is one table for each thing the analysis tells apart.
const fixtureSQL = `
CREATE TABLE inventory (sku text PRIMARY KEY, qty int NOT NULL CHECK (qty >= 0),
  reserved int NOT NULL DEFAULT 0, note text);
CREATE TABLE user_wallets (user_id bigint PRIMARY KEY, balance bigint NOT NULL, debits bigint NOT NULL DEFAULT 0,
  last_debit_at timestamptz, max_debit bigint NOT NULL DEFAULT 0, min_balance bigint, label text);
CREATE TABLE ledger (id bigserial PRIMARY KEY, user_id bigint NOT NULL REFERENCES user_wallets,
  amount bigint NOT NULL, request_id text NOT NULL UNIQUE, at timestamptz NOT NULL DEFAULT now());
CREATE TABLE stock (warehouse int, sku text, qty numeric(12,0) NOT NULL DEFAULT 0, PRIMARY KEY (warehouse, sku));
CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TABLE audited (id int PRIMARY KEY, n int NOT NULL DEFAULT 0);
CREATE TRIGGER audited_audit BEFORE UPDATE OR INSERT ON audited FOR EACH ROW EXECUTE FUNCTION audit();
CREATE TABLE nokey (a int, b int);
CREATE TABLE measures (id int PRIMARY KEY, total float8 NOT NULL DEFAULT 0, count int NOT NULL DEFAULT 0,
  hundreds numeric(10,-2) NOT NULL DEFAULT 0, seen_at timestamptz);
CREATE TABLE events (id int, at date, n int, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
CREATE VIEW wallet_view AS SELECT * FROM user_wallets;
CREATE DOMAIN positive AS bigint CHECK (VALUE > 0);
CREATE DOMAIN small_positive AS positive CHECK (VALUE < 1000);
CREATE TABLE points (id int PRIMARY KEY, p positive NOT NULL DEFAULT 1, sp small_positive,
  email text UNIQUE, owner bigint REFERENCES user_wallets, n int NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX points_lower_email ON points (lower(email)) WHERE n > 0;
CREATE TABLE pair (id int PRIMARY KEY, lo int, hi int, CHECK (lo <= hi));
CREATE TABLE dated (d date PRIMARY KEY, n int NOT NULL DEFAULT 0);
CREATE TABLE uuids (id uuid PRIMARY KEY, n int NOT NULL DEFAULT 0);
CREATE TABLE parent (id int PRIMARY KEY, n int NOT NULL DEFAULT 0);
CREATE TABLE child () INHERITS (parent);
CREATE TABLE ruled (id int PRIMARY KEY, n int NOT NULL DEFAULT 0);
CREATE RULE ruled_nothing AS ON DELETE TO ruled DO INSTEAD NOTHING;
CREATE TABLE counters (id int PRIMARY KEY, hits bigint NOT NULL DEFAULT 0, bytes bigint NOT NULL DEFAULT 0);
CREATE TABLE secured (id int PRIMARY KEY, n int NOT NULL DEFAULT 0);
ALTER TABLE secured ENABLE ROW LEVEL SECURITY;
CREATE TABLE booking (id int PRIMARY KEY, during tsrange, EXCLUDE USING gist (during WITH &&));
CREATE TABLE costs (id int PRIMARY KEY, total numeric(20,8) NOT NULL DEFAULT 0, cents numeric(12,2) NOT NULL DEFAULT 0,
  free numeric, small numeric(4,2), n int NOT NULL DEFAULT 0, note text);
CREATE TABLE rates (rate numeric(6,3) PRIMARY KEY, n int NOT NULL DEFAULT 0);
`

// fixture is a fresh schema holding fixtureSQL's tables and pgbench's (made by
// pgbench -i itself), with its catalog.
type fixture struct {
	target *database.Postgres
	cat    *Catalog
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	target := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := target.Admin().Exec(ctx, fixtureSQL); err != nil {
		t.Fatalf("creating the fixture's tables: %v", err)
	}
	pgbenchInit(t, target, "dtp")
	f := &fixture{target: target}
	f.reload(t)
	return f
}

func (f *fixture) reload(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := LoadCatalog(ctx, f.target.Admin(), f.target.Schema(), nil)
	if err != nil {
		t.Fatalf("LoadCatalog: %v", err)
	}
	f.cat = cat
}

// pgbenchInit runs pgbench -i with the given init steps on the fixture's schema:
// pgbench's own tables, as its users have them.
func pgbenchInit(t *testing.T, target *database.Postgres, steps string) {
	t.Helper()
	cmd := exec.Command(pgbenchPath(t), "-i", "-q", "-I", steps, target.DSN())
	cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path="+target.Schema())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i -I %s: %v\n%s", steps, err, database.Redact(string(out)))
	}
}

func pgbenchPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(testdb.Server(t).Binaries().BinDir, "pgbench")
}

// pgbenchScript is one of pgbench's built-in scripts, as --show-script prints it.
func pgbenchScript(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command(pgbenchPath(t), "--show-script="+name).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench --show-script=%s: %v\n%s", name, err, out)
	}
	return string(out)
}

var scriptVariable = regexp.MustCompile(`(^|[^:]):([A-Za-z_][A-Za-z0-9_]*)`)

// scriptInputs stands in for the script parser, for pgbench scripts as simple as the
// built-in ones: every SQL command (up to its semicolon) with its :variables as $n.
func scriptInputs(script string) []Input {
	var inputs []Input
	var sql strings.Builder
	start := 0
	for i, line := range strings.Split(script, "\n") {
		trimmed := strings.TrimSpace(line)
		if sql.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, `\`) || strings.HasPrefix(trimmed, "--")) {
			continue
		}
		if sql.Len() == 0 {
			start = i + 1
		}
		sql.WriteString(line + "\n")
		if strings.HasSuffix(trimmed, ";") {
			var names []string
			text := scriptVariable.ReplaceAllStringFunc(strings.TrimSpace(sql.String()), func(m string) string {
				sub := scriptVariable.FindStringSubmatch(m)
				n := slices.Index(names, sub[2])
				if n < 0 {
					names = append(names, sub[2])
					n = len(names) - 1
				}
				return sub[1] + "$" + strconv.Itoa(n+1)
			})
			inputs = append(inputs, Input{SQL: text, Line: start, Params: names})
			sql.Reset()
		}
	}
	return inputs
}
