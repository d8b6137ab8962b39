package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"unicode/utf8"

	"github.com/dsh-go/dsh/ptc"
)

// ChildConfig is what a child builds its runtime from: the parent's
// language and budgets.
type ChildConfig struct {
	Language ptc.Language
	Budgets  ptc.Budgets
}

// Opener builds the in-process runtime a child runs programs on. The child
// command supplies it (cmd/dsh picks the language package), so that this
// package imports none.
type Opener func(ChildConfig) (ptc.Runtime, error)

// maxParentFrame bounds a frame from the parent: a program, or a tool
// call's outcome. The parent is trusted; the bound only keeps a broken pipe
// from asking for more than the wire can carry.
const maxParentFrame = maxFrameLimit

// Serve is a child's whole life: it reads the parent's config from in,
// applies the memory caps to the calling process (Go's memory limit, and
// where the OS has them the limits of osLimits), builds the runtime with
// open, says it is ready, and then runs the programs the parent sends, one
// at a time, until in ends or ctx is done. Binding calls, log entries and
// each run's end are written to out. It returns nil at a clean end of in.
//
// Serve trusts its parent; what the program does cannot reach the pipes but
// through the runtime's bindings and log channel.
func Serve(ctx context.Context, in io.Reader, out io.Writer, open Opener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rd := bufio.NewReaderSize(in, 64<<10)
	body, err := readFrame(rd, 1<<20)
	if err != nil {
		return fmt.Errorf("reading the config: %w", err)
	}
	m, err := decode(body, false)
	if err != nil {
		return fmt.Errorf("reading the config: %w", err)
	}
	if m.T != msgConfig {
		return fmt.Errorf("reading the config: got a %s message", m.T)
	}
	cfg := ChildConfig{Language: ptc.Language(m.Config.Language), Budgets: ptc.Budgets{
		ComputeMs: m.Config.ComputeMs, MaxWallMs: m.Config.MaxWallMs,
		MaxOutputBytes: m.Config.MaxOutputBytes, MaxMemoryMB: m.Config.MaxMemoryMB,
	}}
	if err := cfg.Budgets.Validate("process"); err != nil {
		return err
	}
	limit := int64(cfg.Budgets.MaxMemoryMB * (1 << 20))
	debug.SetMemoryLimit(goMemoryLimit(limit))
	if err := limitSelf(limit); err != nil {
		return err
	}
	rt, err := open(cfg)
	if err != nil {
		return err
	}
	defer rt.Close()

	c := &child{w: out, pending: map[int64]chan *message{}, logCap: int(cfg.Budgets.MaxOutputBytes)}
	if err := c.send(&message{T: msgReady}); err != nil {
		return err
	}
	runs := make(chan *message)
	readErr := make(chan error, 1)
	go func() {
		readErr <- c.read(ctx, rd, runs)
	}()
	for {
		select {
		case m := <-runs:
			if err := c.run(ctx, rt, m); err != nil {
				return err
			}
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// goMemoryLimit is the Go runtime's soft memory limit for a child whose
// resident set is capped at limit bytes: the cap less what is resident
// outside the runtime's own accounting (the binary's code and data that
// starting touched, the C library's), so that the soft limit starts the
// collector before the parent's watchdog, which measures the resident set,
// kills the child. It is never below half the cap, and is the cap itself
// where the resident set cannot be measured.
func goMemoryLimit(limit int64) int64 {
	rss, _, ok := procStats(os.Getpid(), make([]byte, 512))
	if !ok {
		return limit
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	var goResident int64
	if s[0].Value.Kind() == metrics.KindUint64 && s[1].Value.Kind() == metrics.KindUint64 {
		goResident = int64(s[0].Value.Uint64() - s[1].Value.Uint64())
	}
	outside := max(rss-goResident, 0) + goLimitSlack
	return max(limit-outside, limit/2)
}

// goLimitSlack is room, past what is resident outside the Go runtime at
// start, for the code a run touches later (the compiler's, the
// interpreter's) and the runtime's own structures.
const goLimitSlack = 8 << 20

// child is the child's side of the wire.
type child struct {
	wmu    sync.Mutex
	w      io.Writer
	logCap int

	mu      sync.Mutex
	running bool  // a run is in flight
	nextID  int64 // the last call id of the run
	pending map[int64]chan *message
}

// send writes one message.
func (c *child) send(m *message) error {
	body, err := m.encode()
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return writeFrame(c.w, body)
}

// read reads the parent's frames: runs go to runs, results to the calls
// waiting for them. A result for no waiting call is dropped: its call's run
// is over.
func (c *child) read(ctx context.Context, rd *bufio.Reader, runs chan<- *message) error {
	for {
		body, err := readFrame(rd, maxParentFrame)
		if err != nil {
			return err
		}
		m, err := decode(body, false)
		if err != nil {
			return fmt.Errorf("a message from the parent: %w", err)
		}
		switch m.T {
		case msgRun:
			select {
			case runs <- m:
			case <-ctx.Done():
				return ctx.Err()
			}
		case msgResult:
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		default:
			return fmt.Errorf("a message from the parent: unexpected %s", m.T)
		}
	}
}

// run runs one program and reports its end.
func (c *child) run(ctx context.Context, rt ptc.Runtime, m *message) error {
	req := ptc.Request{Program: m.Program, OnLog: c.log}
	for i, ns := range m.Bindings {
		n := ptc.Namespace{Global: ns.Global, ErrorClass: ns.ErrorClass, ErrorMember: ns.ErrorMember}
		for _, name := range ns.Names {
			start := c.starter(i, name)
			n.Bindings = append(n.Bindings, ptc.Binding{Name: name, Start: start, Call: func(ctx context.Context, args any) (any, error) {
				wait, err := start(ctx, args)
				if err != nil {
					return nil, err
				}
				return wait(ctx)
			}})
		}
		req.Bindings = append(req.Bindings, n)
	}
	c.mu.Lock()
	c.running, c.nextID = true, 0
	c.mu.Unlock()
	res, err := rt.Run(ctx, req)
	// The run is over: a call its leftover code makes now fails here and
	// never reaches the parent, and results still owed are dropped.
	c.mu.Lock()
	c.running = false
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if err != nil {
		return c.send(&message{T: msgMisuse, Error: err.Error()})
	}
	done := &message{T: msgDone}
	switch {
	case res.Err != nil:
		done.Kind, done.Message = string(res.Err.Kind), res.Err.Message
	case res.HasValue:
		done.Value, done.HasValue = res.Value, true
	}
	return c.send(done)
}

// errRunOver is a call made after its run ended.
var errRunOver = errors.New("run_code settled")

// starter returns the Start of binding name of namespace ns: it sends the
// call to the parent and returns the wait for its result.
func (c *child) starter(ns int, name string) func(context.Context, any) (func(context.Context) (any, error), error) {
	return func(_ context.Context, args any) (func(context.Context) (any, error), error) {
		ch := make(chan *message, 1)
		c.mu.Lock()
		if !c.running {
			c.mu.Unlock()
			return nil, errRunOver
		}
		c.nextID++
		id := c.nextID
		c.pending[id] = ch
		c.mu.Unlock()
		forget := func() {
			c.mu.Lock()
			delete(c.pending, id)
			c.mu.Unlock()
		}
		body, err := (&message{T: msgCall, ID: id, NS: ns, Name: name, Args: args}).encode()
		if err == nil && len(body) > MaxCallBytes {
			err = fmt.Errorf("tool arguments are larger than a call across the process boundary may be (%d bytes)", MaxCallBytes)
		}
		if err == nil {
			c.wmu.Lock()
			err = writeFrame(c.w, body)
			c.wmu.Unlock()
		}
		if err != nil {
			forget()
			return nil, err
		}
		return func(ctx context.Context) (any, error) {
			select {
			case m, ok := <-ch:
				if !ok {
					return nil, errRunOver
				}
				if !m.OK {
					return nil, errors.New(m.Error)
				}
				return m.Value, nil
			case <-ctx.Done():
				forget()
				return nil, ctx.Err()
			}
		}, nil
	}
}

// log streams one entry to the parent, cut to a little past the output cap:
// an entry that long can never fit, and the parent's ledger keeps at most a
// prefix of it shorter than the cap.
func (c *child) log(entry string) {
	if limit := c.logCap + utf8.UTFMax; len(entry) > limit {
		entry = entry[:limit]
	}
	_ = c.send(&message{T: msgLog, Entry: entry})
}
