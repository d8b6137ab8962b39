//go:build !linux

package process

import (
	"os"
	"syscall"
)

// limitSelf sets no OS limit where the OS offers no data-segment limit Go's
// heap obeys: Go's memory limit, the run's heap guard and the parent's
// watchdog remain.
func limitSelf(int64) error { return nil }

// childAttr is the child's process attributes: a process group of its own
// (killed whole). There is no parent-death signal here: a child whose
// parent died ends when its input does.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// haveProcStats reports whether procStats can measure a child.
const haveProcStats = false

// procStats cannot measure a process here.
func procStats(int, []byte) (rss int64, ticks int64, ok bool) { return 0, 0, false }

// ticksPerSecond is the unit of procStats' CPU time.
const ticksPerSecond = 100

// signalName is a signal's name as a message gives it.
func signalName(sig syscall.Signal) string { return sig.String() }

// closeInheritedOnExec does nothing here: descriptors this process
// inherited without close-on-exec reach its children.
func closeInheritedOnExec() {}

// blockingPipe returns a pipe (see the Linux version).
func blockingPipe() (r, w *os.File, err error) { return os.Pipe() }
