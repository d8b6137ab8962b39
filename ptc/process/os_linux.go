package process

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// dataHeadroom is what the OS limit on the child's data segment allows past
// its memory cap: the Go runtime's own structures, and room for the softer
// caps (the Go memory limit, the run's heap guard, the parent's RSS
// watchdog) to act first. The OS limit is the last resort, for a single
// allocation too large and too fast for them.
const dataHeadroom = 256 << 20

// limitSelf applies the child's OS limits to the calling process: its data
// segment (which holds Go's heap) at limit plus dataHeadroom bytes, so an
// allocation past it fails with "out of memory", and no core file.
func limitSelf(limit int64) error {
	data := uint64(limit) + dataHeadroom
	if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: data, Max: data}); err != nil {
		return err
	}
	return unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0})
}

// childAttr is the child's process attributes: a process group of its own
// (killed whole), and SIGKILL when the parent dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// haveProcStats reports whether procStats can measure a child.
const haveProcStats = true

// procStats reads a process's resident set in bytes and its CPU time (user
// and system) in clock ticks from /proc; ok is false when it cannot.
func procStats(pid int, buf []byte) (rss int64, ticks int64, ok bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	n, _ := f.Read(buf)
	f.Close()
	b := buf[:n]
	// The command name (field 2) is in parentheses and may hold anything:
	// the fields that follow start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(b[i+1:])
	// fields[0] is field 3 (state): utime is field 14, stime 15, rss 24.
	if len(fields) < 22 {
		return 0, 0, false
	}
	utime, err1 := strconv.ParseInt(string(fields[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(fields[12]), 10, 64)
	pages, err3 := strconv.ParseInt(string(fields[21]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, 0, false
	}
	return pages * int64(os.Getpagesize()), utime + stime, true
}

// ticksPerSecond is the unit of procStats' CPU time (USER_HZ, 100 on every
// Linux ABI Go supports).
const ticksPerSecond = 100

// signalName is a signal's name as a message gives it: SIGKILL.
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return sig.String()
}

// closeInheritedOnExec marks every descriptor from 3 up close-on-exec, so
// that a child inherits only its three pipes. Go opens its own descriptors
// close-on-exec; this reaches those the process inherited without it from
// whoever started it (a shell's, a supervisor's). It changes the process:
// no child started later inherits them either (os/exec's ExtraFiles are
// unaffected: they are placed in the child after the fork).
func closeInheritedOnExec() {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return
	}
	// A kernel before 5.11: one descriptor at a time.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// blockingPipe returns a pipe whose read end reads with blocking system
// calls rather than through Go's network poller: the thread reading a
// child's messages sleeps in read(2) and is woken by the kernel itself
// when a message arrives, one wake-up instead of the poller's two (about
// a third of a sub-call's cost across the pipes was parking and waking).
func blockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}
