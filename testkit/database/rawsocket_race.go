//go:build linux && race

package database

import (
	"runtime"
	"unsafe"
)

// ioSync is what the race detector orders reads after writes by, as package syscall's own: a
// byte one goroutine writes to a socket happens before another reads it.
var ioSync int64

// raceWritten tells the race detector that a read filled p and follows every write.
func raceWritten(p []byte) {
	if len(p) > 0 {
		runtime.RaceWriteRange(unsafe.Pointer(unsafe.SliceData(p)), len(p))
	}
	runtime.RaceAcquire(unsafe.Pointer(&ioSync))
}

// raceRead tells the race detector that a write read p and precedes every later read.
func raceRead(p []byte) {
	runtime.RaceReleaseMerge(unsafe.Pointer(&ioSync))
	if len(p) > 0 {
		runtime.RaceReadRange(unsafe.Pointer(unsafe.SliceData(p)), len(p))
	}
}
