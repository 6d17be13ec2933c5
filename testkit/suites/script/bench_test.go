package script

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hotspotkit/hotspotkit/examples/scripts"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/testdb"
)

// BenchmarkEvaluate is what recomputing one request of the usage-counter example costs: what
// every queued request costs the queue modes once or twice (when it is queued; when its batch
// is written and claimed, unless it is still cached).
func BenchmarkEvaluate(b *testing.B) {
	p := preparedExample(b, "usage-counter.sql", "usage-counter-init.sql", "hot_keys=1")
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		i += cacheSize // a miss every time
		if _, err := p.evaluate(i); err != nil {
			b.Fatal(err)
		}
	}
}

func preparedExample(b *testing.B, script, init string, sets ...string) *prepared {
	dir := b.TempDir()
	for _, f := range []string{script, init} {
		data, err := scripts.Files.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s := Of(filepath.Join(dir, script), filepath.Join(dir, init), sets...)
	cfg := testkit.Config{Seed: 1, Concurrency: 8, Modes: []testkit.Mode{testkit.AsyncCompact}}
	if err := s.Validate(cfg); err != nil {
		b.Fatal(err)
	}
	target := testdb.New(b)
	p, err := prepare(context.Background(), s, testkit.PrepareEnv{Admin: target.Admin(), Schema: target.Schema(), Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	return p
}
