//go:build race

package netdelay

// raceEnabled: under the race detector sync.Pool drops items at random, so the proxy's
// buffers are allocated again now and then.
const raceEnabled = true
