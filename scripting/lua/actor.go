package lua

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/lua/internal/luavalue"
)

// maxDepth bounds how many calls an instance serves nested while its Lua
// code waits in a re-entrant host call (tools.call, a listener's next()).
const maxDepth = 64

// instance is one Lua state running one plugin, owned by one goroutine: every
// call into it is a job on its queue, run by that goroutine. The fields
// after "owner-goroutine state" are touched only by that goroutine.
type instance struct {
	pool   *pool
	replay bool

	jobs      chan *job
	quit      chan struct{} // closed by close
	dead      chan struct{} // closed when the owner goroutine has exited
	closeOnce sync.Once
	// kill is cancelled when the instance is interrupted or closed: the
	// state's context (while a deadline applies) and every coroutine's, so
	// that running Lua code stops at its next instruction.
	kill       context.Context
	killCancel context.CancelCauseFunc

	tokens hostapi.Tokens[*glua.LUserData]

	// lastCaller is the last verified caller a script read as exec.caller,
	// and its userdata (see callerObject); owner-goroutine state.
	lastCaller   *engine.Caller
	lastCallerUD *glua.LUserData

	// running is the frame whose code the owner goroutine runs now, nil
	// while it waits for a job or in a re-entrant host call; retire is set
	// once a call was stopped in it (see overdue.go).
	running atomic.Pointer[frame]
	retire  atomic.Bool
	// poke wakes the await that waits when a frame's wait is to end
	// (see overdue.go); each await then checks its own frame.
	poke chan struct{}

	// owner-goroutine state
	L             *glua.LState
	conv          *luavalue.Converter
	stack         []*frame // the calls running, innermost last
	wantInstances int      // what the top level asked for (1 by default)
	topDone       bool     // the top level finished: later effects are pinned
	seq           int      // effects made so far, in order; their key
	callbacks     map[int]glua.LValue
	defined       map[weak.Pointer[glua.LTable]]*defined // define_tool results, forgotten with them
	swept         int                                    // the size of defined after its last sweep
	dsh           *glua.LTable                           // the dsh module
	results       map[*glua.LTable]*engine.Result
	mts           metatables
	// raisedMsg is the message the plugin's last error() or failed
	// assert() raised, if raisedSet (see raisedOnPurpose).
	raisedMsg string
	raisedSet bool
}

// callSpec describes one call into the plugin.
type callSpec struct {
	what    string        // names the callback in errors: `tool "x"`, "a tools/pre-execute listener"
	body    bool          // a tool body (or the top level): the caller's cancellation interrupts it after the grace period
	timeout time.Duration // for other callbacks: the deadline from when the script starts
	// giveUp is a body's caller's own ctx (engine.Run.Caller): past the
	// grace after its abort, a body that waits is awaited only while giveUp
	// is live (see overdue.go).
	giveUp context.Context
}

// job is one call queued onto an instance.
type job struct {
	f     *frame
	run   func(i *instance, L *glua.LState, f *frame) (any, error)
	reply chan reply
}

type reply struct {
	v   any
	err error
}

// frame is a call running on the instance (the owner's stack of them grows
// when calls are served nested).
type frame struct {
	spec     callSpec
	caller   context.Context        // what the script's signal stands for
	logCtx   context.Context        // what the script's log lines are made under (nil: the background)
	timedOut atomic.Bool            // the callback's own deadline passed
	cause    atomic.Value           // error: why this frame interrupted the instance
	release  []func()               // run when the call settles
	raised   map[*glua.LTable]error // the error tables the host raised in this call
	deadline bool                   // a deadline applies: the state checks its context
	od       overdueState           // past its grace without running (see overdue.go)

	mu       sync.Mutex
	finished bool                      // the call returned: its timers do nothing
	hostCtxs []context.CancelCauseFunc // host calls to cancel at the deadline
}

// errNotStarted is a call that never started: its instance was interrupted
// or closed while the call waited for it. It may be retried on another.
var errNotStarted = errors.New("the plugin's Lua instance was interrupted before the call started")

// errInterrupted is the cause of an instance interrupted by another call's
// deadline, or closed while a call ran.
var errInterrupted = errors.New("the plugin's Lua instance was interrupted")

// aborted reports whether the frame's signal is aborted, and why.
func (f *frame) aborted() (bool, string) {
	if f.timedOut.Load() {
		return true, (&hostapi.TimedOut{What: f.spec.what, D: f.spec.timeout}).Error()
	}
	if err := f.caller.Err(); err != nil {
		if c := context.Cause(f.caller); c != nil {
			return true, c.Error()
		}
		return true, err.Error()
	}
	return false, ""
}

// hostCtx returns the ctx a host call made by this frame runs under: it is
// cancelled when the call's signal aborts or the instance is interrupted.
func (f *frame) hostCtx(kill context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(f.caller)
	stop := context.AfterFunc(kill, func() { cancel(errInterrupted) })
	if f.spec.timeout > 0 {
		f.mu.Lock()
		f.hostCtxs = append(f.hostCtxs, cancel)
		f.mu.Unlock()
		if f.timedOut.Load() {
			cancel(&hostapi.TimedOut{What: f.spec.what, D: f.spec.timeout})
		}
	}
	return ctx, func() { stop(); cancel(nil) }
}

// startInstance starts the owner goroutine, which makes the state.
func startInstance(pl *pool, replay bool) (*instance, error) {
	kill, killCancel := context.WithCancelCause(context.Background())
	i := &instance{
		pool: pl, replay: replay,
		jobs: make(chan *job), quit: make(chan struct{}), dead: make(chan struct{}), poke: make(chan struct{}, 1),
		kill: kill, killCancel: killCancel,
		callbacks: map[int]glua.LValue{}, defined: map[weak.Pointer[glua.LTable]]*defined{},
	}
	ready := make(chan error, 1)
	go i.loop(ready)
	if err := <-ready; err != nil {
		<-i.dead
		return nil, err
	}
	return i, nil
}

// loop is the owner goroutine: it makes the state, then runs jobs until the
// instance is closed or interrupted.
func (i *instance) loop(ready chan<- error) {
	defer close(i.dead)
	if err := i.setup(); err != nil {
		ready <- err
		return
	}
	defer i.L.Close()
	ready <- nil
	for {
		select {
		case j := <-i.jobs:
			i.runJob(j)
			if i.retire.Load() {
				// A call was stopped in it (see interruptFrame): it serves
				// no other call once the calls under way have returned.
				i.interrupt(errRetired)
			}
			if i.broken() {
				return
			}
		case <-i.quit:
			return
		}
	}
}

// broken reports whether the instance was interrupted or closed.
func (i *instance) broken() bool { return i.kill.Err() != nil }

// close stops the instance; a call running in it is interrupted.
func (i *instance) close() {
	i.closeOnce.Do(func() {
		i.killCancel(errInterrupted)
		close(i.quit)
	})
}

// interrupt stops the Lua code running in the instance, which is then
// discarded. The calls on it fail as aborted; the cause is logged here.
func (i *instance) interrupt(cause error) {
	if i.kill.Err() == nil {
		i.pool.log.Info("instance interrupted: " + cause.Error())
	}
	i.killCancel(cause)
}

// do runs a call on the instance and returns its result. The caller blocks;
// the instance's goroutine runs the script.
//
// The call's deadline timers are armed here, on the caller's goroutine, once
// the instance took the job: the instance's goroutine is busy running the
// script, and a timer it armed could wait for it to be preempted (a
// scheduler period) before firing.
func (i *instance) do(ctx context.Context, spec callSpec, run func(i *instance, L *glua.LState, f *frame) (any, error)) (any, error) {
	f := newFrame(spec, ctx)
	j := &job{f: f, run: run, reply: make(chan reply, 1)}
	var callerDone <-chan struct{} // a body gives up waiting for a busy instance at its deadline
	if spec.body {
		callerDone = ctx.Done()
		if ctx.Err() != nil {
			// Already over: never started (the select below would pick
			// at random between this and an idle instance).
			return nil, context.Cause(ctx)
		}
	}
	select {
	case <-callerDone:
		return nil, context.Cause(ctx)
	case i.jobs <- j:
	case <-i.dead:
		return nil, errNotStarted
	case <-i.quit:
		return nil, errNotStarted
	case <-i.kill.Done():
		// Interrupted while this call waited for a goroutine stuck in Go
		// code: the call never started, and does not wait for it.
		return nil, errNotStarted
	}
	defer i.arm(f)()
	select {
	case r := <-j.reply:
		return r.v, r.err
	case <-i.kill.Done():
	}
	// The instance was interrupted: its goroutine replies as soon as the Lua
	// code unwinds, unless it is stuck in Go code; then the call ends anyway.
	t := time.NewTimer(i.pool.host.grace())
	defer t.Stop()
	select {
	case r := <-j.reply:
		return r.v, r.err
	case <-t.C:
		return nil, callInterrupted(spec.what, i.deadError())
	}
}

func (i *instance) deadError() error {
	if c := context.Cause(i.kill); c != nil && !errors.Is(c, errInterrupted) {
		return c
	}
	return errInterrupted
}

// newFrame is the frame of a call with spec and the caller's ctx. A
// deadline applies to a body whose ctx can be done, and to any other
// callback with a timeout.
func newFrame(spec callSpec, ctx context.Context) *frame {
	return &frame{spec: spec, caller: ctx, logCtx: ctx, deadline: spec.body && ctx.Done() != nil || !spec.body && spec.timeout > 0}
}

// runJob runs one call on the owner goroutine, on the main state (also when
// it is served nested while a coroutine waits in a host call).
func (i *instance) runJob(j *job) {
	if i.broken() {
		j.reply <- reply{err: i.deadError()}
		return
	}
	if len(i.stack) >= maxDepth {
		j.reply <- reply{err: fmt.Errorf("%s: the plugin's Lua instance is re-entered more than %d calls deep", j.f.spec.what, maxDepth)}
		return
	}
	v, err := i.runFrame(j.f, j.run)
	j.reply <- reply{v: v, err: err}
}

// runNested runs a script callback in the trip of the call running now (a
// body's render), under its own deadlines; its log lines are that call's.
func (i *instance) runNested(spec callSpec, run func(i *instance, L *glua.LState, f *frame) (any, error)) (any, error) {
	f := newFrame(spec, context.Background())
	f.logCtx = i.logContext()
	defer i.arm(f)()
	return i.runFrame(f, run)
}

// runFrame runs one script call on the owner goroutine.
func (i *instance) runFrame(f *frame, run func(i *instance, L *glua.LState, f *frame) (any, error)) (any, error) {
	L := i.L
	// The state checks its context at every instruction, which slows tight
	// loops: it is set only while a deadline applies, or a memory guard
	// may have to stop the script.
	restore := false
	var own context.CancelCauseFunc // a nested frame's own context's
	var outer context.Context       // the context of the frames below it
	switch {
	case f.deadline && len(i.stack) > 0 && i.running.Load() == nil:
		// Served nested while the call below it waits (in tools.call, say):
		// a context of its own, so that stopping it leaves the frames below
		// running (see interruptFrame). One run in the trip of the call
		// below (a body's render) shares the instance's: that call runs,
		// and is stopped with it.
		outer = L.Context()
		var ctx context.Context
		ctx, own = context.WithCancelCause(i.kill)
		f.mu.Lock()
		f.od.stop = own
		f.mu.Unlock()
		L.SetContext(ctx)
	case (f.deadline || i.pool.host.Memory != nil) && L.Context() == nil:
		L.SetContext(i.kill)
		restore = true
	}
	running := L.G.CurrentThread
	L.G.CurrentThread = L
	i.stack = append(i.stack, f)
	top := L.GetTop()

	leave := i.pool.host.Memory.Enter(i)
	prev := i.setRunning(f)
	v, err := i.call(L, run, f)
	i.setRunning(prev)
	leave()
	if f.od.overdue.Load() {
		if serr := f.stoppedError(); serr != nil {
			v, err = nil, serr // stopped, or its wait ended, at its grace
		}
	}

	L.SetTop(top)
	i.stack = i.stack[:len(i.stack)-1]
	L.G.CurrentThread = running
	if restore {
		L.RemoveContext()
	}
	if own != nil {
		if outer == nil {
			L.RemoveContext()
		} else {
			L.SetContext(outer)
		}
		own(nil)
	}
	f.mu.Lock()
	f.finished = true // its timers can no longer interrupt the instance
	f.mu.Unlock()
	for _, r := range f.release {
		r()
	}
	if i.broken() {
		v, err = nil, i.interruptedError(f)
	}
	return v, err
}

// arm sets a call's deadlines: for a body (and the top level) the caller's
// cancellation, for other callbacks their own timeout from now. At the
// deadline the script's signal aborts; a grace period later the instance is
// interrupted if the call's code runs still (see graceOver, overdue.go),
// unless the call finished. The timer of a known deadline's grace is armed
// up front. It returns a function that disarms them.
func (i *instance) arm(f *frame) (stop func()) {
	if !f.deadline {
		return func() {}
	}
	grace := i.pool.host.grace()
	ctx, spec := f.caller, f.spec
	var hard *time.Timer
	if spec.body {
		// The deadline's grace ends the call; the grace after a
		// cancellation before it ends only code that runs on (overdue.go).
		d, hasDeadline := ctx.Deadline()
		if hasDeadline {
			hard = time.AfterFunc(time.Until(d)+grace, func() { i.graceOver(f, deadlineCause(ctx), true) })
		}
		stopCaller := context.AfterFunc(ctx, func() {
			f.graceBegins()
			if hasDeadline && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.finished {
				return
			}
			f.od.soft = time.AfterFunc(grace, func() { i.graceOver(f, context.Cause(ctx), false) })
		})
		return func() {
			stopCaller()
			f.mu.Lock()
			if hard != nil {
				hard.Stop()
			}
			if f.od.soft != nil {
				f.od.soft.Stop()
			}
			if f.od.stopGiveUp != nil {
				f.od.stopGiveUp()
			}
			f.mu.Unlock()
		}
	}
	// One timer: at the timeout it aborts the signal and rearms itself for
	// the grace period, then it interrupts.
	to := &hostapi.TimedOut{What: spec.what, D: spec.timeout}
	f.mu.Lock() // the timer's function reads hard under it
	defer f.mu.Unlock()
	hard = time.AfterFunc(spec.timeout, func() {
		if !f.timedOut.Swap(true) {
			f.graceBegins()
			f.mu.Lock()
			for _, c := range f.hostCtxs {
				c(to)
			}
			if !f.finished {
				hard.Reset(grace)
			}
			f.mu.Unlock()
			return
		}
		i.graceOver(f, to, true)
	})
	return func() {
		f.mu.Lock()
		hard.Stop()
		f.mu.Unlock()
	}
}

type causeBox struct{ err error }

// interruptedError is the error of a call whose instance was interrupted.
func (i *instance) interruptedError(f *frame) error {
	var cause error
	if c, ok := f.cause.Load().(causeBox); ok {
		cause = c.err
	} else {
		cause = context.Cause(i.kill)
	}
	if cause == nil {
		cause = errInterrupted
	}
	return callInterrupted(f.spec.what, cause)
}

// call runs a frame's function, turning a Go panic into an error.
func (i *instance) call(L *glua.LState, run func(i *instance, L *glua.LState, f *frame) (any, error), f *frame) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %v", f.spec.what, r)
		}
	}()
	return run(i, L, f)
}

// current returns the innermost call running on the instance.
func (i *instance) current() *frame {
	if len(i.stack) == 0 {
		return nil
	}
	return i.stack[len(i.stack)-1]
}

// await runs work (a nested pipeline call, the rest of a listener chain) on
// another goroutine while the owner goroutine keeps serving the instance's
// queue, so that calls the work makes back into this plugin run (nested)
// instead of deadlocking.
//
// The frame waiting is not running: its grace does not interrupt the
// instance, and its deadline's grace ends the wait (see overdue.go).
func (i *instance) await(work func() (any, error)) (any, error) {
	done := make(chan reply, 1)
	go func() {
		v, err := work()
		done <- reply{v, err}
	}()
	f := i.current()
	prev := i.setRunning(nil)
	defer i.setRunning(prev)
	for {
		if f != nil && f.od.overdue.Load() {
			if err := f.stoppedError(); err != nil {
				return nil, err
			}
		}
		select {
		case r := <-done:
			return r.v, r.err
		case j := <-i.jobs:
			i.runJob(j)
		case <-i.kill.Done():
			return nil, errInterrupted
		case <-i.poke:
			// A frame's wait is to end: this one's, checked above, or one
			// below it, which checks once the job above it returned.
		}
	}
}
