package engine_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/engine"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

// codeless is a suite whose async records of type T have no codec of their own.
type codeless[T any] struct{ rec func(i int64) T }

func (codeless[T]) Info() testkit.Info {
	return testkit.Info{Name: "codeless", Summary: "a suite without a queue codec", Example: "codeless",
		Modes: []testkit.Mode{testkit.Async}, DefaultModes: []testkit.Mode{testkit.Async},
		QueueBackends: []string{testkit.BackendMemory, testkit.BackendRedis}}
}

func (codeless[T]) Seed(context.Context, *testkit.Run) error { return nil }

func (s codeless[T]) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	return testkit.AsyncWorkload(ctx, r, testkit.AsyncSpec[int, T]{
		Records: func(i int64) []T { return []T{s.rec(i)} },
		Key:     func(T) int { return 0 },
		Writer: func(bool) queue.TxWriter[T] {
			return writer[T](func(context.Context, sqldb.Tx, []T) (int, error) { return 0, nil })
		},
	})
}

func (codeless[T]) Verify(context.Context, *testkit.Run, testkit.Result) ([]results.Check, error) {
	return []results.Check{results.Compared("nothing", 0, 0, true)}, nil
}

type writer[T any] func(context.Context, sqldb.Tx, []T) (int, error)

func (w writer[T]) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []T) (int, error) {
	return w(ctx, tx, recs)
}

// hidden is a record JSON would lose fields of.
type hidden struct{ n int64 }

func TestRecordsWithoutCodecTravelAsJSON(t *testing.T) {
	args := append(suitetest.Shared(t), "--requests", "10", "--concurrency", "2", "--queue-backend", "redis")
	code, rep, stderr := suitetest.Run(t, codeless[int64]{rec: func(i int64) int64 { return i }}, args...)
	if code != 0 || rep.Runs[0].Queue.FlushedTotal != 10 {
		t.Fatalf("exit %d, want 0 with 10 records flushed\n%s", code, stderr)
	}
	// A record type JSON cannot carry whole is refused with a clear error, not half written.
	code, rep, stderr = suitetest.Run(t, codeless[hidden]{rec: func(i int64) hidden { return hidden{i} }}, args...)
	if code != cli.ExitFailed {
		t.Fatalf("exit %d, want %d\n%s", code, cli.ExitFailed, stderr)
	}
	if !strings.Contains(rep.Error, "hidden.n is unexported") || !strings.Contains(rep.Error, "AsyncSpec.Codec") {
		t.Errorf("error %q does not say what is missing", rep.Error)
	}
}

// TestPlanIsReadOnly runs sync and async-compact on the Redis backend (the engine opens
// Redis, a run reads its role and stream flags) and checks that nothing wrote to the plan:
// run-time state (the Redis handle, the runs' environments) lives in the engine.
func TestPlanIsReadOnly(t *testing.T) {
	var stdout, stderr strings.Builder
	args := append(suitetest.Shared(t), "--calibrate=false", "--requests", "200", "--concurrency", "4",
		"--modes", "sync,async-compact", "--queue-backend", "redis", "--repeat", "2", "--fault", "pause-flush@0s+50ms")
	code, after, validated := engine.ExecuteChecked(usagecounter.New(), args, &stdout, &stderr)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !reflect.DeepEqual(after, validated) {
		t.Errorf("the run changed its plan:\nafter:     %+v\nvalidated: %+v", after, validated)
	}
	if len(after.Modes) != 2 || after.QueueBackend != testkit.BackendRedis {
		t.Errorf("the plan: modes %v, backend %q", after.Modes, after.QueueBackend)
	}
}
