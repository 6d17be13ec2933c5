package main

import (
	"os/exec"
	"syscall"
)

// setOwnProcessGroup puts a suite invocation in a process group of its own, so that a Ctrl-C
// at the terminal reaches it once, forwarded by baseline ab (abSignals), not twice (a suite
// takes a second signal as "abort the drain"); and has the kernel send it SIGTERM should
// baseline ab die without forwarding anything (kill -9), so it still stops its servers.
func setOwnProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
