package capability

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

// setDeathSignal makes the child die (SIGKILL) when dsh does.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// BecomeSubreaper makes the calling process a child subreaper (Linux
// PR_SET_CHILD_SUBREAPER): a descendant orphaned by its parent's exit, such
// as a program's child that called setsid or a double-forked daemon, is
// reparented to it rather than to PID 1, so that process.run can kill and
// reap what a call left behind. It changes the whole process: a command
// such as dsh turns it on once at start; a library embedding dsh decides for
// itself. With it on, the process should reap the orphans of any other
// children it starts. It returns an error wrapping errors.ErrUnsupported on
// other systems.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a child subreaper: %w", err)
	}
	return nil
}

// maxSweeps bounds the sweeps of killLeftovers: each sweep kills what the
// previous one missed (a child forked meanwhile).
const maxSweeps = 50

// leftovers is what killLeftovers knows of one call's processes.
type leftovers struct {
	needle []byte
	pgid   int
	self   int
	// orphans: dsh is a subreaper, so a live child of dsh's that carries no
	// call token is an orphan it adopted (a program's descendant that left
	// the group and replaced its environment): it is killed too. selfExe
	// tells a child between fork and exec (still dsh's image) from one.
	orphans  bool
	selfExe  string
	killed   map[int]bool // pids it signalled
	sessions map[int]bool // sessions and groups of the marked processes
}

// killLeftovers kills what a call's program left behind once it has exited
// and its group was killed: every process still in its process group, and
// every process whose environment carries the call's token (it left the
// group through setsid or setpgid, wherever it was reparented). dsh's own
// children among them (reparented to it as a subreaper) are reaped, and so
// are its zombie children that belonged to the call: in its group, killed
// here, or leaders of a session or group a marked process was in (the
// middle process of a double fork). It sweeps /proc until a sweep finds
// nothing alive, at most maxSweeps times and for grace.
func killLeftovers(token string, pgid int, grace time.Duration) {
	l := &leftovers{
		needle: []byte(callTokenVar + "=" + token + "\x00"), pgid: pgid, self: os.Getpid(),
		killed: map[int]bool{}, sessions: map[int]bool{},
	}
	var on int32 // PR_GET_CHILD_SUBREAPER writes the flag through its argument
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&on)), 0, 0, 0); err == nil && on != 0 {
		l.orphans = true
		l.selfExe, _ = os.Readlink("/proc/self/exe")
	}
	deadline := time.Now().Add(grace)
	for range maxSweeps {
		found, zombies := l.sweep()
		for _, pid := range zombies {
			reapChild(pid, deadline)
		}
		if !found || time.Now().After(deadline) {
			break
		}
	}
	for pid := range l.killed {
		l.settle(pid, deadline)
	}
}

// sweep kills the call's live processes once. It reports whether it found
// any, and returns dsh's zombie children that belonged to the call.
func (l *leftovers) sweep() (found bool, zombies []int) {
	d, err := os.Open("/proc")
	if err != nil {
		return false, nil
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false, nil
	}
	var ours []procStat // dsh's zombie children, attributed once all is read
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == l.self {
			continue
		}
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		if st.state == 'Z' {
			if st.ppid == l.self {
				ours = append(ours, st)
			}
			continue
		}
		switch {
		case st.pgid == l.pgid:
			_ = syscall.Kill(pid, syscall.SIGKILL) // the group outlives its members: pid is one
		case killIfMarked(pid, l.needle):
		case l.orphans && st.ppid == l.self && l.killIfAdopted(pid):
		default:
			continue
		}
		found = true
		l.killed[pid] = true
		l.sessions[st.sid], l.sessions[st.pgid] = true, true
	}
	for _, st := range ours {
		if st.pgid == l.pgid || l.killed[st.pid] || l.sessions[st.pid] {
			zombies = append(zombies, st.pid)
		}
	}
	return found, zombies
}

// settle waits, until deadline, for a killed process to be gone, reaping it
// if it ends as dsh's child (a child of a killed parent is reparented once
// the parent is dead).
func (l *leftovers) settle(pid int, deadline time.Time) {
	for {
		st, ok := readStat(pid)
		switch {
		case !ok:
			return // reaped
		case st.ppid == l.self:
			reapChild(pid, deadline)
			return
		case st.state == 'Z' && !l.killed[st.ppid]:
			return // someone else's to reap (PID 1 without a subreaper)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// killIfMarked kills pid if its environment carries needle. The kill goes
// through a pidfd taken after a first reading and checked by a second, so a
// pid reused meanwhile is never the one signalled.
func killIfMarked(pid int, needle []byte) bool {
	if !environHas(pid, needle) {
		return false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case errors.Is(err, unix.ENOSYS): // a kernel before 5.3
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return true
	case err != nil:
		return false // gone already
	}
	defer unix.Close(fd)
	if !environHas(pid, needle) {
		return false
	}
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	return true
}

// killIfAdopted kills pid, a live child of dsh's, when its environment is
// readable and carries no call token at all and it does not run dsh's own
// image: an orphan adopted from some call's program, since every program
// process.run starts carries its call's token.
func (l *leftovers) killIfAdopted(pid int) bool {
	if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err != nil || exe == l.selfExe {
		return false
	}
	env, err := readEnviron(pid)
	if err != nil || hasEntry(env, []byte(callTokenVar+"=")) {
		return false // unreadable (never kill blind), or some call's
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return true
}

// maxEnviron bounds how much of a process's environment is read.
const maxEnviron = 4 << 20

// environHas reports whether pid's environment holds an entry starting
// with needle.
func environHas(pid int, needle []byte) bool {
	env, err := readEnviron(pid)
	return err == nil && hasEntry(env, needle)
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

// hasEntry reports whether a NUL-separated environment has an entry
// starting with needle.
func hasEntry(env, needle []byte) bool {
	return bytes.HasPrefix(env, needle) || bytes.Contains(env, append([]byte{0}, needle...))
}

// procStat is what sweep reads of /proc/<pid>/stat.
type procStat struct {
	pid             int
	state           byte
	ppid, pgid, sid int
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	st, ok := parseStat(b)
	st.pid = pid
	return st, ok
}

// parseStat reads "pid (comm) state ppid pgrp session ...": comm may hold spaces
// and parentheses, so the fields start after its last ")".
func parseStat(b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	sid, err3 := strconv.Atoi(string(f[3]))
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], ppid: ppid, pgid: pgid, sid: sid}, true
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
