//go:build !linux

package mcp

import (
	"os/exec"
	"syscall"
)

// serverAttr is a stdio server's process attributes: a process group of
// its own. There is no parent-death signal here.
func serverAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// awaitExit waits for the server to exit. Without a way to wait and leave
// the child unreaped, it reaps it (reaped is true): its group is then
// killed after its leader is gone.
func awaitExit(cmd *exec.Cmd) (reaped bool) {
	_ = cmd.Wait()
	return true
}
