package capability

import (
	"syscall"

	"github.com/dsh-go/dsh/internal/reaper"
)

// setDeathSignal makes the child die (SIGKILL) when dsh does.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// BecomeSubreaper makes the calling process a child subreaper (Linux
// PR_SET_CHILD_SUBREAPER): a descendant orphaned by its parent's exit, such
// as a program's child that called setsid or a double-forked daemon, is
// reparented to it rather than to PID 1, so that process.run can kill and
// reap what a call left behind. It changes the whole process: a command
// such as dsh turns it on once at start; a library embedding dsh decides for
// itself. With it on, every other child the process starts for itself must
// be started through dsh's record of its own children (the dsh command's
// MCP servers and process-isolation workers are), or the sweep after a
// process.run call takes it for an orphan. It returns an error wrapping
// errors.ErrUnsupported on other systems.
func BecomeSubreaper() error { return reaper.BecomeSubreaper() }
