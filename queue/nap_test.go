package queue

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time this process has used.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestPartialBatchWaitsWithoutSpinning: with a capacity below the batch size, a worker holding
// a partial batch that already outgrew the capacity waits for its flush interval asleep. (A
// wait for "the rest of the batch, capped at the capacity, minus what it held" is 0: the
// worker would spin on a core until the batch is due.)
func TestPartialBatchWaitsWithoutSpinning(t *testing.T) {
	f := &fakeFlusher{}
	q := newTestQueue(t, f, Options[int, rec]{Capacity: 2, Workers: 1, BatchSize: 10, FlushInterval: time.Hour})
	enqueueN(t, q, 2, 2)
	time.Sleep(50 * time.Millisecond) // the worker takes both records and naps
	before := processCPU(t)
	time.Sleep(500 * time.Millisecond)
	if used := processCPU(t) - before; used > 100*time.Millisecond {
		t.Errorf("a napping worker used %v of CPU in 500 ms: it spins instead of sleeping", used)
	}
	closeQueue(t, q)
}
