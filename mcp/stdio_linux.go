package mcp

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// serverAttr is a stdio server's process attributes: a process group of
// its own, and SIGKILL when dsh dies.
func serverAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// awaitExit waits for the server to exit, leaving it unreaped (reaped is
// false): its pid, which names its group, is not reused while the group
// is killed.
func awaitExit(cmd *exec.Cmd) (reaped bool) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return false
		}
	}
}
