package lua

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/warmpool"
	"github.com/dsh-go/dsh/scripting/lua/internal/sandbox"
)

// ProgramBackend is the name of the gopher-lua program runtime in its errors
// ("gopher-lua: run() after disposal").
const ProgramBackend = "gopher-lua"

// programChunk names a program in its error messages ("program.lua:3:
// kaboom").
const programChunk = "program.lua"

// computePoll is the longest interval between two reads of a run's busy
// time (§3.2: sampled every 25 ms); a check falls due sooner when the
// budget's remainder is shorter.
const computePoll = 25 * time.Millisecond

// maxCachedPrograms bounds the compiled-program cache.
const maxCachedPrograms = 256

// ProgramOptions configures a [ProgramRuntime].
type ProgramOptions struct {
	// Budgets are the runs' limits (§3.2); the zero value means
	// ptc.DefaultBudgets(). They are validated by NewProgramRuntime.
	Budgets ptc.Budgets
	// Logger receives what belongs to no run's result; nil discards it.
	Logger *slog.Logger
	// Memory, when set, stops a run whose program runs while the heap
	// passes the guard's limit: the run fails as worker-exit with
	// "worker exceeded its memory limit (<n> MiB)". In-process this is a
	// sampled bound, not a hard one (process isolation gives that); nil
	// turns it off.
	Memory *scripting.MemoryGuard
	// WarmStates is how many sandboxed states (nothing of any run in them)
	// are kept built ahead of need by a background goroutine; 0 means
	// DefaultWarmStates, a negative value none (each run then builds its
	// own).
	WarmStates int
}

// DefaultWarmStates is the number of states a ProgramRuntime keeps built
// ahead of need when ProgramOptions.WarmStates is 0.
const DefaultWarmStates = 2

// ProgramRuntime runs run_code programs written in Lua in gopher-lua,
// in-process (docs/run-code.md). Each run gets a fresh state with
// the plugins' sandbox (package internal/sandbox) and nothing else
// but its own globals: its namespaces (tools), their error classes
// (ToolCallError), print, and the JSON helpers null, array and object.
//
// The program is the body of a function: the chunk's first returned value
// is the completion (nil, or no return, is no value). Programs are compiled
// once per text; a state is never used for two runs, but states are built
// ahead of need by a background goroutine (see ProgramOptions.WarmStates).
//
// A run ends by its completion, its compute budget (the interpreter's busy
// time: the time a binding call waits is not counted), its wall-clock
// ceiling, the end of its context, or Close; every end but the completion
// cancels the state's context, which stops the Lua code at its next
// instruction and which no pcall can catch, and Run returns only once it has
// stopped. Binding calls still in flight see their context cancelled; their
// late outcomes are dropped.
//
// # The program's globals
//
//   - Each namespace is a global table (tools) whose keys are exactly its
//     bindings, whatever their names (tools["a.b"], tools.__index): pairs
//     lists them and nothing else. Calling one (tools.echo{value = "x"})
//     blocks the program until the call settles, and returns its value or
//     raises the namespace's error. Calling a name the namespace lacks
//     (tools.nope{}) raises its error too, `unknown tool "nope"` with the
//     closest names, while reading the name still gives nil (see
//     luaCallSites). The namespace's metatable (protected)
//     offers gather, unless a binding has that name: tools.gather(f1, f2,
//     ...) runs the functions as coroutines, so that their tool calls are
//     submitted together and overlap, and returns one array table of their
//     first results in order (null for a function that returned nothing),
//     like Promise.all, or raises the first error one of them raised: local
//     r = tools.gather(f, g) then r[1], r[2]. A tool call
//     that a gathered function makes inside a protected call (pcall,
//     xpcall) or a metamethod cannot suspend its coroutine and blocks it
//     instead (it is still made and waited for, without overlap).
//   - A failed call raises a table of the namespace's error class:
//     e.name is the class's name, e[member] the binding's name, e.message
//     the message; tostring(e) is e.message; ToolCallError.is(e) tells it
//     apart (its metatable is protected, so it cannot be forged). A
//     namespace without an error class raises the message as a string.
//   - print(...) is the log channel: one entry per call, its arguments
//     converted with tostring and joined with a tab. The conversion is
//     print's own, made before any program code: reassigning tostring
//     changes nothing; a __tostring metamethod is called, inside the run.
//   - null is JSON null (tostring(null) is "null"): a tool's null arrives as
//     null, and null in a value is JSON null. Lua's nil is absence. array(t)
//     and object(t) mark a table (a new one without t) as a JSON array or
//     object, so that an empty one converts as such; tables from tools keep
//     what they were, [] and {} included. Objects come out with their keys
//     sorted.
//
// What the bridge does never depends on the program's globals: the
// conversions, the error classes, gather and print are held by Go
// references, so a program reassigning setmetatable, pairs, next, type,
// rawget, tostring, table.* or string.* changes only its own code.
type ProgramRuntime struct {
	budgets ptc.Budgets
	log     *slog.Logger
	memory  *scripting.MemoryGuard

	runs ptc.Runs[*programRun]

	cmu   sync.Mutex
	cache map[string]compiled

	pool *warmpool.Pool[*programState]
}

var _ ptc.Runtime = (*ProgramRuntime)(nil)

// NewProgramRuntime validates opts' budgets and returns a runtime.
func NewProgramRuntime(opts ProgramOptions) (*ProgramRuntime, error) {
	b := opts.Budgets
	if b == (ptc.Budgets{}) {
		b = ptc.DefaultBudgets()
	}
	if err := b.Validate(ProgramBackend); err != nil {
		return nil, err
	}
	if _, err := programPrelude(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &ProgramRuntime{
		budgets: b,
		log:     log,
		memory:  opts.Memory,
		cache:   make(map[string]compiled),
	}
	warm := opts.WarmStates
	if warm == 0 {
		warm = DefaultWarmStates
	}
	p.pool = warmpool.New(max(warm, 0), p.newState, func(st *programState) { st.L.Close() }, nil)
	return p, nil
}

// Language is ptc.Lua.
func (p *ProgramRuntime) Language() ptc.Language { return ptc.Lua }

// Isolation is ptc.InProcess.
func (p *ProgramRuntime) Isolation() ptc.Isolation { return ptc.InProcess }

// Close fails the runs in flight as {abort, "runtime disposed"}, waits for
// their interpreters to stop, stops building states and disposes of the
// idle ones, and makes later runs fail with ptc.RunAfterDisposal. It is
// idempotent.
func (p *ProgramRuntime) Close() error {
	p.runs.Close(func(r *programRun) { r.stop(ptc.DisposedFailure()) })
	p.pool.Close()
	return nil
}

// Run runs one program (see ptc.Runtime). Its error is for contract misuse
// only: a request whose bindings ptc.ValidateBindingsFor refuses, or a run
// after Close.
func (p *ProgramRuntime) Run(ctx context.Context, req ptc.Request) (ptc.Result, error) {
	if err := ptc.ValidateBindingsFor(ptc.Lua, ProgramBackend, req.Bindings); err != nil {
		return ptc.Result{}, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	r := &programRun{rt: p, ctx: ctx, req: req, ledger: ptc.NewLedger(int64(p.budgets.MaxOutputBytes))}
	r.calls, r.endCalls = context.WithCancelCause(ctx)
	defer r.endCalls(errRunStopped)
	if !p.runs.Join(r) {
		return ptc.Result{}, ptc.RunAfterDisposal(ProgramBackend)
	}
	defer p.runs.Leave(r)
	if ctx.Err() != nil { // pre-aborted: no state is taken
		return r.ledger.Finish(ptc.Result{Err: ptc.AbortFailure(ptc.CauseText(ctx))}), nil
	}
	res := r.run()
	if req.OnCompute != nil {
		req.OnCompute(float64(r.busyNow()) / float64(time.Millisecond))
	}
	return r.ledger.Finish(res), nil
}

// errRunStopped is the cause the run's own context ends with: the run's
// failure says why.
var errRunStopped = errors.New("program run stopped")

// programRun is one run: its request, its ledger, its state and how it
// ended.
type programRun struct {
	rt  *ProgramRuntime
	ctx context.Context
	// calls is the state's context and the binding calls' context: ctx,
	// also ended when the run stops (a budget, Close).
	calls    context.Context
	endCalls context.CancelCauseFunc
	req      ptc.Request
	ledger   *ptc.Ledger

	mu       sync.Mutex
	fail     *ptc.Failure // why it was stopped, first reason wins
	finished bool

	// Busy time: ns spent running Lua code so far, and when the current
	// stretch began (ns since base, +1; 0 while a binding call is waited
	// for).
	base    time.Time
	busy    atomic.Int64
	entered atomic.Int64
	leave   func() // the memory guard's, for the current stretch
	ctimer  *time.Timer
	cmu     sync.Mutex
	cdone   bool

	// Owned by the run's goroutine.
	*programState
	classes  []*glua.LTable            // each namespace's error metatable, nil without a class
	gathers  map[*glua.LState]*gather  // the threads tools.gather runs, and their gather
	inFlight sync.WaitGroup            // binding calls on goroutines of their own
	depth    int                       // gathers running inside one another
	marker   *glua.LUserData           // what a thread yields for a pending call
	pending  map[*glua.LState]*pending // the call each suspended gather thread waits for
	calledAt luaCallSites              // the program's call sites
}

// stop ends the run for f unless it already ended: the state's context is
// cancelled (which no pcall catches) and the run reports f.
func (r *programRun) stop(f *ptc.Failure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil || r.finished {
		return
	}
	r.fail = f
	r.endCalls(errRunStopped)
}

// Interrupt stops the run for the memory guard. It implements
// scripting.Victim.
func (r *programRun) Interrupt(error) {
	r.stop(ptc.MemoryLimitFailure(float64(r.rt.memory.Limit() / scripting.MiB)))
}

// run runs the program to its result (before the ledger's Finish).
func (r *programRun) run() (res ptc.Result) {
	b := r.rt.budgets
	st, err := r.rt.pool.Take()
	if err != nil {
		return ptc.Result{Err: ptc.CrashFailure(err.Error())}
	}
	r.programState = st
	defer func() {
		r.endCalls(errRunStopped)
		r.inFlight.Wait()
		st.L.Close()
		r.programState = nil
		r.rt.pool.Refill()
	}()

	fn, calls, fail := r.rt.compile(st, r.req.Program)
	if fail != nil {
		return ptc.Result{Err: fail}
	}
	r.calledAt = calls
	if err := r.bind(); err != nil {
		return ptc.Result{Err: ptc.CrashFailure(err.Error())}
	}

	stopAbort := context.AfterFunc(r.ctx, func() { r.stop(ptc.AbortFailure(ptc.CauseText(r.ctx))) })
	wall := time.AfterFunc(msDuration(b.MaxWallMs), func() { r.stop(ptc.WallCeilingFailure(b.MaxWallMs)) })
	r.base = time.Now()
	r.busy.Store(0)
	r.resume()
	r.armCompute(msDuration(b.ComputeMs))

	out, callErr := r.call(fn)

	r.pause()
	stopAbort()
	wall.Stop()
	r.cmu.Lock()
	r.cdone = true
	r.ctimer.Stop()
	r.cmu.Unlock()
	r.mu.Lock()
	r.finished = true
	if r.fail == nil && r.ctx.Err() != nil { // ended before its result was taken
		r.fail = ptc.AbortFailure(ptc.CauseText(r.ctx))
	}
	fail = r.fail
	r.mu.Unlock()

	switch {
	case fail != nil:
		return ptc.Result{Err: fail}
	case callErr != nil:
		return ptc.Result{Err: callErr}
	}
	return r.completion(out)
}

// call runs the program's function, with a recovery for a panic that
// escapes gopher-lua's own.
func (r *programRun) call(fn *glua.LFunction) (out glua.LValue, fail *ptc.Failure) {
	L := r.L
	defer func() {
		if v := recover(); v != nil {
			out, fail = nil, ptc.CrashFailure(fmt.Sprint(v))
		}
	}()
	defer sandbox.Interruptible(L, r.calls)()
	base := L.GetTop()
	L.Push(fn)
	if err := sandbox.Call(L, 0, glua.MultRet); err != nil {
		var ie *sandbox.InterruptedError
		if errors.As(err, &ie) {
			// The run was stopped: its failure says why (see run).
			return nil, nil
		}
		return nil, r.thrownFailure(err)
	}
	out = glua.LNil
	if L.GetTop() > base {
		out = L.Get(base + 1)
	}
	L.SetTop(base)
	return out, nil
}

// thrownFailure is the exception of an error the program let through.
func (r *programRun) thrownFailure(err error) *ptc.Failure {
	var ae *glua.ApiError
	if !errors.As(err, &ae) {
		return ptc.CrashFailure(err.Error())
	}
	if ae.Type == glua.ApiErrorPanic {
		// gopher-lua's own overflows are ordinary program errors (a
		// runaway recursion); any other panic is a crash of the runtime.
		msg := ae.Object.String()
		if !isOverflow(msg) {
			return ptc.CrashFailure(msg)
		}
		return ptc.ExceptionFailure(msg)
	}
	msg, ok := r.render(ae.Object)
	if !ok {
		return ptc.UnrenderableThrowFailure()
	}
	return ptc.ExceptionFailure(msg)
}

// completion converts the program's first returned value: nil is no value.
func (r *programRun) completion(v glua.LValue) ptc.Result {
	if v == nil || v == glua.LNil {
		return ptc.Result{}
	}
	gv, err := r.conv.ToGo(v, "value", nil)
	if err != nil {
		if errors.Is(err, dsl.ErrLimit) {
			// Run's Finish gives the logs so far their share beside the
			// message (its Limit's result would charge them again).
			return ptc.Result{Err: ptc.OutputLimitFailure(r.ledger.Cap())}
		}
		return ptc.Result{Err: ptc.InvalidOutputFailure()}
	}
	return ptc.Result{Value: gv, HasValue: true}
}

// msDuration converts a validated budget in ms.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// resume starts a stretch of busy time (Lua code runs).
func (r *programRun) resume() {
	r.entered.Store(int64(time.Since(r.base)) + 1)
	if g := r.rt.memory; g != nil {
		r.leave = g.Enter(r)
	}
}

// pause ends the current stretch of busy time (a binding call is waited
// for, or the program is over).
func (r *programRun) pause() {
	if s := r.entered.Swap(0); s != 0 {
		r.busy.Add(int64(time.Since(r.base)) + 1 - s)
	}
	if r.leave != nil {
		r.leave()
		r.leave = nil
	}
}

// busyNow is the busy time so far, the current stretch included.
func (r *programRun) busyNow() time.Duration {
	n := r.busy.Load()
	if s := r.entered.Load(); s != 0 {
		n += int64(time.Since(r.base)) + 1 - s
	}
	return time.Duration(n)
}

// armCompute checks the compute budget every computePoll, or when the rest
// of the budget could run out if sooner.
func (r *programRun) armCompute(budget time.Duration) {
	var check func()
	next := func() time.Duration {
		return max(min(computePoll, budget-r.busyNow()), time.Millisecond)
	}
	check = func() {
		if r.busyNow() >= budget {
			r.stop(ptc.ComputeBudgetFailure(r.rt.budgets.ComputeMs))
			return
		}
		r.cmu.Lock()
		defer r.cmu.Unlock()
		if !r.cdone {
			r.ctimer.Reset(next())
		}
	}
	r.cmu.Lock()
	r.ctimer = time.AfterFunc(next(), check)
	r.cmu.Unlock()
}
