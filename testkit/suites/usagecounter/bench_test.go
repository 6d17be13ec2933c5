package usagecounter

import (
	"fmt"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// BenchmarkSyncTx is the counter suite's sync request as a run drives it, on the shared test
// server (suitetest.BenchRequests): the pool's acquire, BEGIN, the claim and the four counter
// UPDATEs, COMMIT. Its allocs/op and cpu-µs/op are the client's cost of a request (ns/op is
// mostly the server's, and the machine's); with one worker the request path alone, with 16
// the scheduling of goroutines that wait on their connections too.
func BenchmarkSyncTx(b *testing.B) {
	for _, workers := range []int{1, 16} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			suitetest.BenchRequests(b, New(), testkit.Sync, testkit.Config{HotKeys: 1, Concurrency: workers, Seed: 1}, workers)
		})
	}
}
