package testkit_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/load"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
	"github.com/hotspotkit/hotspotkit/testkit/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// codeless is a suite whose async records have no codec.
type codeless struct{}

func (codeless) Info() testkit.Info {
	return testkit.Info{Name: "codeless", Summary: "a suite without a queue codec", Example: "codeless",
		Modes: []string{testkit.ModeAsync}, DefaultModes: []string{testkit.ModeAsync},
		QueueBackends: []string{testkit.BackendMemory, testkit.BackendRedis}}
}

func (codeless) Seed(context.Context, *testkit.Run) error { return nil }

func (codeless) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	return testkit.AsyncWorkload(ctx, r, testkit.AsyncSpec[int, int]{
		Records: func(i int64) []int { return []int{int(i)} },
		Key:     func(v int) int { return v },
		Writer: func(bool) queue.TxWriter[int] {
			return writer(func(context.Context, pgx.Tx, []int) (int, error) { return 0, nil })
		},
	})
}

func (codeless) Verify(context.Context, *testkit.Run, *load.Result) ([]results.Check, error) {
	return []results.Check{{Name: "nothing", OK: true}}, nil
}

type writer func(context.Context, pgx.Tx, []int) (int, error)

func (w writer) WriteBatch(ctx context.Context, tx pgx.Tx, recs []int) (int, error) {
	return w(ctx, tx, recs)
}

func TestMissingCodecIsAClearError(t *testing.T) {
	args := append(suitetest.Shared(t), "--requests", "10", "--concurrency", "2")
	code, rep, stderr := suitetest.Run(t, codeless{}, append(args, "--queue-backend", "redis")...)
	if code != testkit.ExitFailed {
		t.Fatalf("exit %d, want %d\n%s", code, testkit.ExitFailed, stderr)
	}
	if !strings.Contains(rep.Error, "no codec") || !strings.Contains(rep.Error, "AsyncSpec.Codec") {
		t.Errorf("error %q does not say what is missing", rep.Error)
	}
	// The memory backend needs no codec.
	if code, _, stderr := suitetest.Run(t, codeless{}, args...); code != 0 {
		t.Fatalf("memory backend: exit %d\n%s", code, stderr)
	}
}
