package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/ptc"
)

// Backend is the name the runtime's contract-misuse errors start with.
const Backend = "process"

// ChildCommand is the argument a child is started with: the hidden dsh
// subcommand that calls [Serve]. A program embedding dsh that sets
// Options.Path to itself runs Serve when given it.
const ChildCommand = "ptc-child"

// Defaults of [Options].
const (
	DefaultPool         = 2
	DefaultRecycleAfter = 100
	// DefaultReadyTimeout bounds a child's start, from its exec to its
	// ready message.
	DefaultReadyTimeout = 10 * time.Second
	// MinMemoryMB is the smallest memory cap a child runs under: what a
	// ready dsh child takes, with room for a program.
	MinMemoryMB = 64
)

// MaxCallBytes bounds the JSON text of one binding call a child sends (its
// arguments and a little framing); a larger call fails in the child, never
// reaching the parent. It is above what a value crossing into Go may be
// (dsl.DefaultMaxBytes), so the executor's own argument cap, when lower,
// is the one a program meets.
const MaxCallBytes = dsl.DefaultMaxBytes + 1<<20

// backstop is how far past a budget the parent lets a child run before it
// kills it itself: the child enforces its budgets exactly, and the parent's
// kill is for a child that cannot (stuck where the interpreter is not
// interruptible).
const (
	wallBackstop = time.Second
	pollInterval = 10 * time.Millisecond
)

// Options configures a [Runtime].
type Options struct {
	// Language is the language of the programs, which the child's runtime
	// runs (ptc.TypeScript or ptc.Lua). Required.
	Language ptc.Language
	// Budgets are the runs' limits (§3.2): the child enforces the time and
	// output budgets, the parent repeats them, and MaxMemoryMB is each
	// child's memory cap. The zero value means ptc.DefaultBudgets().
	Budgets ptc.Budgets
	// Path is the executable children run; "" means this program
	// (os.Executable). Args is a child's command line, its program name
	// first (as exec.Cmd.Args); nil means {"dsh", ChildCommand}.
	Path string
	Args []string
	// Pool is how many ready children are kept ahead of need; 0 means
	// DefaultPool, a negative value none (each run then starts its own).
	Pool int
	// RecycleAfter is how many runs a child serves before it is replaced;
	// 0 means DefaultRecycleAfter.
	RecycleAfter int
	// Logger receives what belongs to no run (a child that failed to start
	// ahead of need, a crashed child's last words); nil discards it.
	Logger *slog.Logger
}

// Runtime runs programs in child processes: each run goes to
// a child dsh process, one run at a time each, over a framed JSON protocol
// on its standard input and output; its binding calls travel back and run
// here, through whatever the bindings do (the PTC executor: the full
// pipeline).
//
// A child has an empty environment, no file descriptors but its three
// pipes, a process group of its own, and (on Linux) dies with its parent.
// Its memory is capped three ways: Go's memory limit and (on Linux) an OS
// limit on its data segment, both set by the child, and a watchdog here that
// kills it when its resident set passes the cap. It is killed, whole
// process group, on timeout, abort and Close, and a run's result is produced
// only once it is gone. A child is reused only after a run that ended by
// itself (a value, an exception, invalid or oversized output); after a
// timeout, an abort, a crash or RecycleAfter runs it is replaced.
//
// Every message from a child is hostile input: its frames are size-capped
// and shape-checked, each call id is answered once, values arrive as
// lossless JSON or not at all, log entries are charged to this side's own
// ledger, and a child that breaks the protocol is killed, its run failing
// as worker-exit.
type Runtime struct {
	lang     ptc.Language
	budgets  ptc.Budgets
	path     string
	args     []string
	pool     int
	recycle  int
	logger   *slog.Logger
	maxFrame int64
	cfg      config

	runs ptc.Runs[*run]

	mu       sync.Mutex
	closed   bool
	idle     []*worker
	starting int
	bg       sync.WaitGroup // children being started or retired
}

var _ ptc.Runtime = (*Runtime)(nil)

// NewRuntime returns a process runtime and starts filling its pool.
func NewRuntime(opts Options) (*Runtime, error) {
	if opts.Language != ptc.TypeScript && opts.Language != ptc.Lua {
		return nil, fmt.Errorf("process: no runtime language %q", opts.Language)
	}
	b := opts.Budgets
	if b == (ptc.Budgets{}) {
		b = ptc.DefaultBudgets()
	}
	if err := b.Validate(Backend); err != nil {
		return nil, err
	}
	if b.MaxMemoryMB < MinMemoryMB {
		return nil, fmt.Errorf("process: config.maxMemoryMB must be at least %d, got %v", MinMemoryMB, b.MaxMemoryMB)
	}
	path := opts.Path
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("process: finding this program to run children: %w", err)
		}
		path = exe
	}
	args := opts.Args
	if args == nil {
		args = []string{"dsh", ChildCommand}
	}
	pool := opts.Pool
	switch {
	case pool == 0:
		pool = DefaultPool
	case pool < 0:
		pool = 0
	}
	recycle := opts.RecycleAfter
	if recycle <= 0 {
		recycle = DefaultRecycleAfter
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	maxFrame := int64(MaxCallBytes)
	if n := int64(b.MaxOutputBytes) + 1<<20; n > maxFrame {
		maxFrame = min(n, maxFrameLimit)
	}
	rt := &Runtime{
		lang: opts.Language, budgets: b, path: path, args: append([]string(nil), args...),
		pool: pool, recycle: recycle, logger: logger, maxFrame: maxFrame,
		cfg: config{Language: string(opts.Language), ComputeMs: b.ComputeMs, MaxWallMs: b.MaxWallMs,
			MaxOutputBytes: b.MaxOutputBytes, MaxMemoryMB: b.MaxMemoryMB},
	}
	rt.mu.Lock()
	rt.refill()
	rt.mu.Unlock()
	return rt, nil
}

// Language returns the programs' language.
func (rt *Runtime) Language() ptc.Language { return rt.lang }

// Isolation returns ptc.Process.
func (rt *Runtime) Isolation() ptc.Isolation { return ptc.Process }

// Close fails the runs in flight as aborted ("runtime disposed"), waits
// until their children are gone, kills the idle ones and makes later runs
// fail.
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	rt.closed = true
	idle := rt.idle
	rt.idle = nil
	rt.mu.Unlock()
	rt.runs.Close(func(r *run) { r.stop(errDisposed) })
	for _, w := range idle {
		w.kill(errDisposed)
		<-w.exited
	}
	rt.bg.Wait()
	// A child started meanwhile was killed by put.
	return nil
}

// errDisposed is the cause of a run stopped by Close.
var errDisposed = errors.New("runtime disposed")

// refill starts children until Pool are idle or starting; rt.mu held.
func (rt *Runtime) refill() {
	for !rt.closed && len(rt.idle)+rt.starting < rt.pool {
		rt.starting++
		rt.bg.Add(1)
		go func() {
			defer rt.bg.Done()
			w, err := rt.start(context.Background())
			rt.mu.Lock()
			rt.starting--
			rt.mu.Unlock()
			if err != nil {
				rt.logger.Warn("process: starting a child ahead of need", "error", err)
				return
			}
			rt.put(w)
		}()
	}
}

// start starts a child and waits until it is ready.
func (rt *Runtime) start(ctx context.Context) (*worker, error) {
	w, err := startWorker(rt.path, rt.args, rt.cfg, rt.maxFrame)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", rt.path, err)
	}
	if err := w.awaitReady(ctx, DefaultReadyTimeout); err != nil {
		return nil, err
	}
	return w, nil
}

// put makes w idle, or kills it once the runtime is closed.
func (rt *Runtime) put(w *worker) {
	rt.mu.Lock()
	if rt.closed || !w.alive() {
		rt.mu.Unlock()
		rt.retire(w, errDisposed)
		return
	}
	rt.idle = append(rt.idle, w)
	rt.mu.Unlock()
}

// retire kills w in the background.
func (rt *Runtime) retire(w *worker, why error) {
	w.kill(why)
	rt.bg.Add(1)
	go func() {
		defer rt.bg.Done()
		<-w.exited
	}()
}

// take returns a ready child: an idle one, or a new one.
func (rt *Runtime) take(ctx context.Context) (*worker, error) {
	rt.mu.Lock()
	for len(rt.idle) > 0 {
		w := rt.idle[len(rt.idle)-1]
		rt.idle = rt.idle[:len(rt.idle)-1]
		if w.alive() {
			rt.refill()
			rt.mu.Unlock()
			return w, nil
		}
		// Dead while idle (it spoke unasked, or crashed): replace it.
		rt.mu.Unlock()
		rt.retire(w, errRecycled)
		rt.mu.Lock()
	}
	rt.refill()
	rt.mu.Unlock()
	return rt.start(ctx)
}

// release returns w after a run: idle again when reusable, else replaced.
func (rt *Runtime) release(w *worker, reusable bool) {
	w.runs++
	if !reusable || w.runs >= rt.recycle {
		rt.retire(w, errRecycled)
		rt.mu.Lock()
		rt.refill()
		rt.mu.Unlock()
		return
	}
	rt.put(w)
}

// errRecycled is why a child that served its runs (or cannot be trusted
// with another) is killed.
var errRecycled = errors.New("recycled")

// Run runs req's program in a child (§2.2): see [Runtime].
func (rt *Runtime) Run(ctx context.Context, req ptc.Request) (ptc.Result, error) {
	if err := ptc.ValidateBindingsFor(rt.lang, Backend, req.Bindings); err != nil {
		return ptc.Result{}, err
	}
	ledger := ptc.NewLedger(int64(rt.budgets.MaxOutputBytes))
	if ctx.Err() != nil {
		return ledger.Finish(ptc.Result{Err: ptc.AbortFailure(ptc.CauseText(ctx))}), nil
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &run{rt: rt, req: req, ledger: ledger, ctx: runCtx, cancel: cancel}
	if !rt.runs.Join(r) {
		return ptc.Result{}, ptc.RunAfterDisposal(Backend)
	}
	defer rt.runs.Leave(r)
	w, err := rt.take(runCtx)
	if err != nil {
		if runCtx.Err() != nil {
			return r.ended(), nil
		}
		return ledger.Finish(ptc.Result{Err: ptc.CrashFailure(err.Error())}), nil
	}
	r.w = w
	return r.run()
}
