package reaper

import (
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"strings"
	"sync"
)

// MarkVar is the environment variable that carries a call's mark.
const MarkVar = "DSH_CALL_TOKEN"

// registry is what dsh knows of its own children: the ones it started on
// purpose and has not reaped yet (pid to start time), and the marks of the
// calls now running.
type registry struct {
	mu       sync.Mutex // held through a Start's fork and a sweep's scan
	children map[int]uint64
	marks    map[string]bool
}

// reg is the process-wide record: the subreaper attribute, and so the set
// of children a sweep must tell apart, belong to the whole process.
var reg = &registry{children: map[int]uint64{}, marks: map[string]bool{}}

// Start starts cmd and records its process as one of dsh's own children
// until Forget. The record's lock is held through the fork, so no sweep can
// take the child for an orphan before it is recorded.
func Start(cmd *exec.Cmd) error {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	start, _ := startTime(pid) // 0 when unreadable: matched by pid alone
	reg.children[pid] = start
	return nil
}

// Forget drops pid from the record; call it once the process is reaped.
func Forget(pid int) {
	reg.mu.Lock()
	delete(reg.children, pid)
	reg.mu.Unlock()
}

// recorded reports whether pid, started at start, is one of dsh's own
// children. reg.mu is held.
func (r *registry) recorded(pid int, start uint64) bool {
	s, ok := r.children[pid]
	return ok && (s == 0 || s == start)
}

// A Mark names one call's processes through their environment: a hint
// for the sweeps, never a protection (see the package doc).
type Mark struct{ token string }

// NewMark returns a fresh random mark, live (it defers other sweeps) until
// Done.
func NewMark() (*Mark, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	m := &Mark{token: hex.EncodeToString(b[:])}
	reg.mu.Lock()
	reg.marks[m.token] = true
	reg.mu.Unlock()
	return m, nil
}

// Env returns the environment entry, MarkVar=<token>.
func (m *Mark) Env() string { return MarkVar + "=" + m.token }

// Done ends the mark's life: a process carrying it no longer defers any
// sweep.
func (m *Mark) Done() {
	reg.mu.Lock()
	delete(reg.marks, m.token)
	reg.mu.Unlock()
}

// WithMark returns env with m's entry as its last, in place of any other
// MarkVar entry.
func WithMark(env []string, m *Mark) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, MarkVar+"=") {
			out = append(out, kv)
		}
	}
	return append(out, m.Env())
}

// Leftovers says what Kill kills besides the orphans.
type Leftovers struct {
	// Pgid is a process group to kill whole (0: none).
	Pgid int
	// Mark kills every process carrying it, wherever it was reparented
	// (nil: none).
	Mark *Mark
}
