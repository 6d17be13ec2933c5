package engine_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestBoundsAreUsageErrors: a request timeout that is not positive, a reconcile timeout below
// zero or a shutdown timeout that is not positive is refused in one line, exit 2, before any
// server starts.
func TestBoundsAreUsageErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--request-timeout 0":     "--request-timeout must be positive",
		"--request-timeout -1s":   "--request-timeout must be positive",
		"--reconcile-timeout -1s": "--reconcile-timeout must not be negative",
		"--shutdown-timeout 0":    "--shutdown-timeout must be positive",
		"--request-timeout soon":  "invalid argument",
	} {
		t.Run(args, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli.Execute(codeless[int64]{}, strings.Fields(args), &stdout, &stderr)
			if code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, cli.ExitUsage, stderr.String())
			}
			if first, _, _ := strings.Cut(stderr.String(), "\n"); !strings.Contains(first, want) {
				t.Errorf("want a first line saying %q, got:\n%s", want, stderr.String())
			}
		})
	}
}

// TestEveryPathConnects: through the delaying proxy (--db-rtt 0 and 1ms), a --postgres-url
// without sslmode reaches a server without TLS (sslmode=prefer falls back to plain text) and
// sslmode=require and verify-full reach one with TLS; every mode verified.
func TestEveryPathConnects(t *testing.T) {
	plain := suitetest.Shared(t)[1] // the shared test server's URL, which says sslmode=disable
	noMode := withQuery(t, plain, func(q url.Values) { q.Del("sslmode") })

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := pgserver.Start(ctx, pgserver.Config{TLS: true, Unsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	require := withQuery(t, srv.DSN(), func(q url.Values) { q.Set("sslmode", "require") })
	verifyFull := withQuery(t, srv.DSN(), func(q url.Values) {
		q.Set("sslmode", "verify-full")
		q.Set("sslrootcert", srv.CAFile())
	})
	for _, tc := range []struct{ name, url, rtt string }{
		{"no sslmode, no TLS, rtt 0", noMode, "0"},
		{"no sslmode, no TLS, rtt 1ms", noMode, "1ms"},
		{"require, rtt 0", require, "0"},
		{"require, rtt 1ms", require, "1ms"},
		{"verify-full, rtt 1ms", verifyFull, "1ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, rep, stderr := suitetest.Run(t, usagecounter.New(), "--postgres-url", tc.url, "--db-rtt", tc.rtt,
				"--requests", "200", "--concurrency", "8")
			if code != cli.ExitOK {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if len(rep.Runs) != 4 {
				t.Fatalf("%d runs, want every mode's", len(rep.Runs))
			}
			for _, r := range rep.Runs {
				suitetest.Verified(t, r)
			}
		})
	}
}

func withQuery(t *testing.T, dsn string, edit func(url.Values)) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	edit(q)
	u.RawQuery = q.Encode()
	return u.String()
}
