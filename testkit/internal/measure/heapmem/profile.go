package heapmem

import (
	"bytes"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// ProfilePeak keeps the heap profile taken when the live heap was largest, sampled every
// 200 ms, and writes it to path when stop is called (--mem-profile). The file is created at
// once, so a bad path fails before any work starts.
func ProfilePeak(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	done, finished := make(chan struct{}), make(chan struct{})
	var peak bytes.Buffer
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var most uint64
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > most || peak.Len() == 0 {
				most = v
				peak.Reset()
				_ = pprof.WriteHeapProfile(&peak)
			}
			select {
			case <-tick.C:
			case <-done:
				return
			}
		}
	}()
	return func() error {
		close(done)
		<-finished
		_, err := f.Write(peak.Bytes())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}
