package mariadbserver

import (
	"context"
	"os"
	"testing"
	"time"
)

// BenchmarkStartStop starts and stops servers, their data directory made by mariadb-install-db
// or copied from a template (TestMain's), and reports the three steps' times per server:
// init-ms (mariadb-install-db, or the copy), start-ms (until it answers) and stop-ms (a clean
// shutdown, the directory removed). Each step's processor time, the server's included, is the
// process's: run with -benchtime=10x under /usr/bin/time to read it.
func BenchmarkStartStop(b *testing.B) {
	if _, err := FindBinaries(""); err != nil {
		b.Skip(err)
	}
	template := os.Getenv(TemplateDirEnv)
	for _, c := range []struct{ name, template string }{{"install", ""}, {"template", template}} {
		b.Run(c.name, func(b *testing.B) {
			b.Setenv(TemplateDirEnv, c.template)
			var initialise, start, stop time.Duration
			for i := 0; i < b.N; i++ {
				s, err := Start(context.Background(), Config{})
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if err := s.Stop(); err != nil {
					b.Fatal(err)
				}
				stop += time.Since(t0)
				initialise += s.InitDuration()
				start += s.StartDuration()
			}
			per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(per(initialise), "init-ms")
			b.ReportMetric(per(start), "start-ms")
			b.ReportMetric(per(stop), "stop-ms")
		})
	}
}
