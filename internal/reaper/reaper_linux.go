package reaper

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes the calling process a child subreaper (Linux
// PR_SET_CHILD_SUBREAPER): a descendant orphaned by its parent's exit is
// reparented to it rather than to PID 1, so that the sweeps can find, kill
// and reap it. It changes the whole process; with it on, every child the
// process starts for itself must go through Start. It returns an error
// wrapping errors.ErrUnsupported on other systems.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a child subreaper: %w", err)
	}
	return nil
}

// isSubreaper reports whether the process is a child subreaper now.
func isSubreaper() bool {
	var on int32 // PR_GET_CHILD_SUBREAPER writes the flag through its argument
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&on)), 0, 0, 0)
	return err == nil && on != 0
}

// maxSweeps bounds the sweeps of one Kill: each kills what the previous
// one missed (a child forked meanwhile).
const maxSweeps = 50

// Kill kills what a program or a server left behind once it has ended:
// the processes l names, and every orphan dsh adopted (a live child of
// dsh's not in the record, unless it carries the mark of another running
// call) with the whole tree below it. It reaps dsh's zombie children that
// are not in the record. It sweeps /proc until a sweep finds nothing alive,
// at most maxSweeps times and for grace, then waits (until the same
// deadline) for what it killed to be gone, reaping those that end as dsh's
// children.
func Kill(l Leftovers, grace time.Duration) {
	s := &sweeper{self: os.Getpid(), l: l, orphans: isSubreaper(), killed: map[int]uint64{}}
	if l.Mark != nil {
		s.needle = []byte(l.Mark.Env() + "\x00")
	}
	deadline := time.Now().Add(grace)
	for range maxSweeps {
		if !s.sweep() || time.Now().After(deadline) {
			break
		}
	}
	for pid, start := range s.killed {
		s.settle(pid, start, deadline)
	}
}

// KillDescendants kills every process below dsh, recorded or not, sweeping
// until none is left alive or grace has passed. dsh runs it as it exits.
func KillDescendants(grace time.Duration) {
	self := os.Getpid()
	deadline := time.Now().Add(grace)
	for range maxSweeps {
		procs := scan()
		below := descendants(procs, self)
		if len(below) == 0 {
			return
		}
		for _, p := range below {
			killVerified(p.pid, p.start)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// sweeper is one Kill's state.
type sweeper struct {
	self    int
	l       Leftovers
	needle  []byte // l.Mark's environment entry, NUL-terminated
	orphans bool   // dsh is a subreaper
	killed  map[int]uint64
}

// sweep kills the leftovers once, and reaps the unrecorded zombie children
// of dsh's. It reports whether it found any live leftover.
func (s *sweeper) sweep() (found bool) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	procs := scan()
	var targets []proc
	for _, p := range procs {
		switch {
		case p.pid == s.self:
		case p.state == 'Z':
			if p.ppid == s.self && !reg.recorded(p.pid, p.start) {
				reap(p.pid)
			}
		case s.l.Pgid != 0 && p.pgid == s.l.Pgid:
			targets = append(targets, p)
		case s.needle != nil && environHas(p.pid, s.needle):
			targets = append(targets, p)
		case s.orphans && p.ppid == s.self && !reg.recorded(p.pid, p.start) && !s.deferred(p.pid):
			targets = append(targets, p)
			targets = append(targets, descendants(procs, p.pid)...)
		}
	}
	for _, p := range targets {
		if killVerified(p.pid, p.start) {
			found = true
			s.killed[p.pid] = p.start
		}
	}
	return found
}

// deferred reports whether pid's environment carries the mark of a running
// call other than the sweep's own: that call's sweep kills it. reg.mu is
// held.
func (s *sweeper) deferred(pid int) bool {
	env, err := readEnviron(pid)
	if err != nil {
		return false
	}
	prefix := []byte(MarkVar + "=")
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		tok, ok := bytes.CutPrefix(kv, prefix)
		if ok && reg.marks[string(tok)] && (s.l.Mark == nil || string(tok) != s.l.Mark.token) {
			return true
		}
	}
	return false
}

// settle waits, until deadline, for a killed process to be gone, reaping
// it if it ends as an unrecorded child of dsh's (a child of a killed
// parent is reparented once the parent is dead).
func (s *sweeper) settle(pid int, start uint64, deadline time.Time) {
	for {
		p, ok := readProc(pid)
		switch {
		case !ok || p.start != start:
			return // gone (and maybe reused)
		case p.ppid == s.self:
			reg.mu.Lock()
			mine := reg.recorded(pid, start)
			reg.mu.Unlock()
			if mine {
				return // its starter reaps it
			}
			reapChild(pid, deadline)
			return
		case p.state == 'Z':
			return // someone else's to reap (PID 1 without a subreaper)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// killVerified sends SIGKILL to pid if it is still the process that
// started at start: through a pidfd taken first and checked after, so a
// pid reused meanwhile is never the one signalled.
func killVerified(pid int, start uint64) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case errors.Is(err, unix.ENOSYS): // a kernel before 5.3
		if s, ok := startTime(pid); ok && s == start {
			return syscall.Kill(pid, syscall.SIGKILL) == nil
		}
		return false
	case err != nil:
		return false // gone already
	}
	defer unix.Close(fd)
	if s, ok := startTime(pid); !ok || s != start {
		return false
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil
}

// proc is what a sweep reads of /proc/<pid>/stat.
type proc struct {
	pid             int
	state           byte
	ppid, pgid, sid int
	start           uint64 // clock ticks after boot
}

// scan reads every process /proc shows now.
func scan() []proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil
	}
	out := make([]proc, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// descendants returns the live processes below pid in procs.
func descendants(procs []proc, pid int) []proc {
	kids := map[int][]proc{}
	for _, p := range procs {
		if p.state != 'Z' && p.pid != p.ppid {
			kids[p.ppid] = append(kids[p.ppid], p)
		}
	}
	var out []proc
	seen := map[int]bool{pid: true}
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range kids[next] {
			if !seen[c.pid] {
				seen[c.pid] = true
				out = append(out, c)
				queue = append(queue, c.pid)
			}
		}
	}
	return out
}

// startTime reads pid's start time, in clock ticks after boot.
func startTime(pid int) (uint64, bool) {
	p, ok := readProc(pid)
	return p.start, ok
}

func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	p, ok := parseStat(b)
	p.pid = pid
	return p, ok
}

// parseStat reads "pid (comm) state ppid pgrp session ... starttime ...":
// comm may hold spaces and parentheses, so the fields start after its last
// ")". starttime is field 22.
func parseStat(b []byte) (proc, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	sid, err3 := strconv.Atoi(string(f[3]))
	start, err4 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return proc{}, false
	}
	return proc{state: f[0][0], ppid: ppid, pgid: pgid, sid: sid, start: start}, true
}

// maxEnviron bounds how much of a process's environment is read.
const maxEnviron = 4 << 20

// environHas reports whether pid's environment holds an entry starting
// with needle.
func environHas(pid int, needle []byte) bool {
	env, err := readEnviron(pid)
	return err == nil && (bytes.HasPrefix(env, needle) || bytes.Contains(env, append([]byte{0}, needle...)))
}

// readEnviron reads pid's environment (at most maxEnviron bytes).
func readEnviron(pid int) ([]byte, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxEnviron))
}

// reap collects a zombie child of dsh's.
func reap(pid int) {
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
}

// reapChild collects a killed child of dsh's, waiting for its death until
// deadline at most.
func reapChild(pid int, deadline time.Time) {
	for {
		var ws syscall.WaitStatus
		n, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if n == pid || err != nil && !errors.Is(err, syscall.EINTR) {
			return // reaped, or not (or no longer) our child
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
