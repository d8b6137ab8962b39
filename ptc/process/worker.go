package process

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/internal/reaper"
	"github.com/dsh-go/dsh/ptc"
)

// stderrHead and stderrTail are how much of a child's standard error is
// kept: its start, where a Go crash report gives its reason (a report of a
// deep interpreter stack runs past any tail), and its end.
const (
	stderrHead = 4 << 10
	stderrTail = 16 << 10
)

// writeTimeout bounds one frame's write to a child: a child that stops
// reading its input for that long is broken and killed.
const writeTimeout = 10 * time.Second

// worker is one child process.
type worker struct {
	cmd      *exec.Cmd
	pid      int
	in       *os.File      // the child's standard input, our end
	ready    chan *message // the child's first message, for awaitReady
	exited   chan struct{} // closed once the child is gone and reaped
	dead     chan struct{} // closed when it is killed
	deadOnce sync.Once
	maxFrame int64
	runs     int // runs served, counted by the runtime

	wmu sync.Mutex // serializes writes to in

	mu       sync.Mutex
	started  bool  // its first message came
	cur      *run  // the run it serves; nil while idle
	killed   error // why we killed it (nil: we did not)
	violated error // the protocol violation that made us kill it
	state    *os.ProcessState
	stderr   []byte // the head and the tail of its standard error
	waitErr  error
}

// errProtocol marks a child that broke the protocol.
var errProtocol = errors.New("the worker broke the protocol")

// startWorker starts a child and sends it cfg. It does not wait for the
// child to be ready.
func startWorker(path string, args []string, cfg config, maxFrame int64) (*worker, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := blockingPipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: args}
	cmd.Env = []string{} // empty, not inherited
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = childAttr()
	closeInheritedOnExec()
	err = reaper.Start(cmd) // dsh's own child, never taken for an orphan
	// The child holds its ends; ours are closed, so that its exit is our
	// end of input.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	w := &worker{cmd: cmd, pid: cmd.Process.Pid, in: inW, ready: make(chan *message, 1), exited: make(chan struct{}), dead: make(chan struct{}), maxFrame: maxFrame}
	go w.monitor(outR, errR)
	body, err := (&message{T: msgConfig, Config: cfg}).encode()
	if err == nil {
		err = w.write(body)
	}
	if err != nil {
		w.kill(err)
		<-w.exited
		return nil, err
	}
	return w, nil
}

// monitor reads the child's frames until its output ends, keeps the head
// and the tail of its standard error, then reaps it and closes exited. Its
// first frame goes to awaitReady; later ones to the run it serves, handled
// here as they arrive (a call is submitted in arrival order, a log entry
// charged). A frame that breaks the protocol, or comes while the child is
// idle, kills the child.
func (w *worker) monitor(out, errOut *os.File) {
	var head []byte
	var tail bytes.Buffer
	var total int64
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 4096)
		for {
			n, err := errOut.Read(buf)
			total += int64(n)
			if room := stderrHead - len(head); room > 0 {
				head = append(head, buf[:min(n, room)]...)
			}
			tail.Write(buf[:n])
			if tail.Len() > 2*stderrTail {
				b := tail.Bytes()[tail.Len()-stderrTail:]
				tail.Reset()
				tail.Write(b)
			}
			if err != nil {
				return
			}
		}
	}()
	rd := bufio.NewReaderSize(out, 64<<10)
	for {
		body, err := readFrame(rd, w.maxFrame)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				w.violate(err)
			}
			break
		}
		m, err := decode(body, true)
		if err != nil {
			w.violate(err)
			break
		}
		w.mu.Lock()
		first, r := !w.started, w.cur
		w.started = true
		w.mu.Unlock()
		switch {
		case first:
			w.ready <- m
		case r != nil:
			err = r.take(m)
		default:
			err = fmt.Errorf("a %s message while idle", m.T)
		}
		if err != nil {
			w.violate(err)
			break
		}
	}
	// Whatever ended the output, the child is done for: make sure, then
	// reap it.
	w.signal()
	<-drained
	out.Close()
	errOut.Close()
	err := w.cmd.Wait()
	reaper.Forget(w.pid)
	w.mu.Lock()
	w.state, w.waitErr = w.cmd.ProcessState, err
	w.stderr = headAndTail(head, tail.Bytes(), total)
	w.mu.Unlock()
	w.in.Close()
	close(w.exited)
}

// violate records a protocol violation and kills the child.
func (w *worker) violate(err error) {
	w.mu.Lock()
	if w.violated == nil {
		w.violated = err
	}
	w.mu.Unlock()
	w.kill(fmt.Errorf("%w: %v", errProtocol, err))
}

// kill kills the child's whole process group, recording why (the first
// reason wins). It does not wait: exited says when it is gone.
func (w *worker) kill(why error) {
	w.mu.Lock()
	if w.killed == nil {
		w.killed = why
	}
	w.mu.Unlock()
	w.deadOnce.Do(func() { close(w.dead) })
	w.signal()
}

// signal sends SIGKILL to the child's process group and to the child.
func (w *worker) signal() {
	_ = syscall.Kill(-w.pid, syscall.SIGKILL)
	_ = w.cmd.Process.Kill()
}

// alive reports whether the child has not exited or been killed.
func (w *worker) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.killed == nil
}

// write sends one frame, giving up (and killing the child) when the child
// does not take it within writeTimeout.
func (w *worker) write(body []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_ = w.in.SetWriteDeadline(time.Now().Add(writeTimeout))
	err := writeFrame(w.in, body)
	if err != nil {
		w.kill(fmt.Errorf("writing to the worker: %w", err))
	}
	return err
}

// send encodes and writes m.
func (w *worker) send(m *message) error {
	body, err := m.encode()
	if err != nil {
		return err
	}
	return w.write(body)
}

// awaitReady waits for the child's ready message.
func (w *worker) awaitReady(ctx context.Context, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-w.ready:
		if m.T == msgReady {
			return nil
		}
		w.violate(fmt.Errorf("a %s message before ready", m.T))
	case <-w.exited:
	case <-t.C:
		w.kill(fmt.Errorf("the worker was not ready within %v", timeout))
	case <-ctx.Done():
		w.kill(context.Cause(ctx))
	}
	<-w.exited
	return w.deathError()
}

// deathError describes a dead child for an error: why it was killed, or how
// it ended and what it printed last.
func (w *worker) deathError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.killed != nil {
		return w.killed
	}
	msg := "the worker ended"
	if w.state != nil {
		msg = "the worker ended: " + w.state.String()
	}
	if s := bytes.TrimSpace(lastLines(w.stderr, 3)); len(s) > 0 {
		msg += ": " + string(s)
	}
	return errors.New(msg)
}

// failure is the run failure for a child that is gone without settling
// (§3.1): killed for its memory, or how it ended.
func (w *worker) failure(memoryMB float64) *ptc.Failure {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.violated != nil {
		return ptc.CrashFailure(fmt.Sprintf("%v: %v", errProtocol, w.violated))
	}
	st := w.state
	if st == nil {
		return ptc.CrashFailure(fmt.Sprint(w.waitErr))
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ptc.WorkerSignalFailure(signalName(ws.Signal()))
	}
	if outOfMemory(w.stderr) {
		return ptc.MemoryLimitFailure(memoryMB)
	}
	return ptc.WorkerExitFailure(st.ExitCode())
}

// headAndTail joins the kept start of a stream of total bytes and its end,
// without repeating what both hold, marking what was left out between them.
func headAndTail(head, tail []byte, total int64) []byte {
	after := total - int64(len(head)) // bytes past the head
	tail = tail[max(0, int64(len(tail))-min(after, stderrTail)):]
	out := append([]byte(nil), head...)
	if after > int64(len(tail)) {
		out = append(out, "\n…\n"...)
	}
	return append(out, tail...)
}

// outOfMemory reports whether a child's last words say the Go runtime ran
// out of memory (its data segment limit, or the OS refusing it).
func outOfMemory(stderr []byte) bool {
	for _, s := range []string{
		"fatal error: runtime: out of memory", "fatal error: out of memory", "runtime: cannot allocate memory",
		"ThreadSanitizer: internal allocator is out of memory", // a child built with -race
	} {
		if bytes.Contains(stderr, []byte(s)) {
			return true
		}
	}
	return false
}

// lastLines returns the first n lines of b's first crash line onward
// (a Go crash report starts with its reason), or its last n lines.
func lastLines(b []byte, n int) []byte {
	if i := bytes.Index(b, []byte("fatal error:")); i >= 0 {
		b = b[i:]
	} else if i := bytes.Index(b, []byte("panic:")); i >= 0 {
		b = b[i:]
	}
	lines := bytes.SplitN(b, []byte("\n"), n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return bytes.Join(lines, []byte("; "))
}

// attach makes r the run w serves.
func (w *worker) attach(r *run) {
	w.mu.Lock()
	w.cur = r
	w.mu.Unlock()
}

// detach makes w idle: a frame it sends from now on breaks the protocol.
func (w *worker) detach() {
	w.mu.Lock()
	w.cur = nil
	w.mu.Unlock()
}
