//go:build !linux

package database

import "net"

// newRawSocket is c: raw system calls are read and written on Linux only (rawsocket_linux.go).
func newRawSocket(c net.Conn) net.Conn { return c }
