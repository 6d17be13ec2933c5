//go:build !linux

package hostenv

// FSType names the filesystem path is on; off Linux it is not read ("").
func FSType(path string) string { return "" }
