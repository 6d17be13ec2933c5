//go:build !linux

package main

import "os/exec"

// setOwnProcessGroup leaves the suite in baseline ab's process group elsewhere: a Ctrl-C at
// the terminal then reaches it directly as well as forwarded, which it takes as a second
// signal (its drain is cut short; its servers are still stopped).
func setOwnProcessGroup(*exec.Cmd) {}
