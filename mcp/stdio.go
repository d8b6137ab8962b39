package mcp

import (
	"context"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/reaper"
)

// stdioTransport runs an imported stdio server as dsh's own child, in a
// process group of its own: when the connection closes (dsh's exit, a
// reconnect, the server's own exit), the group is killed whole and so is
// every orphan dsh adopted from it (dsh is a subreaper), so nothing the
// server started outlives its connection. On Linux the server also dies
// with dsh (a parent-death signal).
type stdioTransport struct {
	cmd *exec.Cmd
	// terminate is each wait of Close: for the server to exit once its
	// input is closed, then after SIGTERM to its group, before SIGKILL.
	terminate time.Duration
}

// Connect starts the server and connects to it over its standard input
// and output.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	t.cmd.SysProcAttr = serverAttr()
	// The server's mark defers the sweeps of dsh/process calls while the
	// server runs (what it daemonized is its own), and its own sweep kills
	// what carries it. A hint only: see internal/reaper.
	mark, err := reaper.NewMark()
	if err != nil {
		return nil, err
	}
	t.cmd.Env = reaper.WithMark(t.cmd.Env, mark)
	p := &serverProc{cmd: t.cmd, mark: mark, exited: make(chan struct{}), done: make(chan struct{})}
	started := make(chan error, 1)
	go p.run(started)
	if err := <-started; err != nil {
		return nil, err
	}
	return &stdioConn{Connection: newFrameConn(stdout, stdin), p: p, terminate: t.terminate}, nil
}

// serverProc is a started server.
type serverProc struct {
	cmd    *exec.Cmd
	mark   *reaper.Mark
	exited chan struct{} // the server has exited (not yet reaped)
	done   chan struct{} // its group and orphans are killed, it is reaped
}

// run starts the server and sees it to its end: once it has exited, its
// group and the orphans dsh adopted are killed, then it is reaped. It runs
// on a goroutine locked to its OS thread for the server's whole life: the
// parent-death signal fires when the thread that started the child ends.
func (p *serverProc) run(started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer p.mark.Done()
	if err := reaper.Start(p.cmd); err != nil {
		started <- err
		return
	}
	started <- nil
	pid := p.cmd.Process.Pid
	reaped := awaitExit(p.cmd)
	close(p.exited)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	reaper.Kill(reaper.Leftovers{Pgid: pid, Mark: p.mark}, leftoverGrace)
	if !reaped {
		_ = p.cmd.Wait()
	}
	reaper.Forget(pid)
	close(p.done)
}

// leftoverGrace bounds the sweep for what a server left behind.
const leftoverGrace = 2 * time.Second

// stop ends the server: it waits up to terminate for it to exit (its input
// is closed), then sends SIGTERM to its group and waits as long again,
// then SIGKILL; it returns once the server's leftovers are killed and it
// is reaped.
func (p *serverProc) stop(terminate time.Duration) {
	pid := p.cmd.Process.Pid
	wait := func() bool {
		t := time.NewTimer(terminate)
		defer t.Stop()
		select {
		case <-p.exited:
			return true
		case <-t.C:
			return false
		}
	}
	if terminate <= 0 || !wait() {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		if terminate <= 0 || !wait() {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	<-p.done
}

// stdioConn is the connection to a started server; closing it ends the
// server and everything it started.
type stdioConn struct {
	sdk.Connection
	p         *serverProc
	terminate time.Duration
	once      sync.Once
	err       error
}

// Close closes the server's input and output, then stops it (see stop).
func (c *stdioConn) Close() error {
	c.once.Do(func() {
		c.err = c.Connection.Close()
		c.p.stop(c.terminate)
	})
	return c.err
}
