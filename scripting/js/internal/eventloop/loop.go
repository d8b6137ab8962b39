package eventloop

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
)

const (
	// DefaultMaxCallStackSize is the call depth limit used when
	// Options.MaxCallStackSize is not positive. See the package documentation
	// for how it was chosen.
	DefaultMaxCallStackSize = 1000
	// DefaultGrace is the grace period used when Options.Grace is zero.
	DefaultGrace = 100 * time.Millisecond
	// EntrySource names the loop's trampoline in goja stack frames (file name
	// of the JS frame and name of the native one), so they can be filtered.
	EntrySource = "<eventloop>"
)

// Options configures a Loop. The zero value is usable.
type Options struct {
	// MaxCallStackSize bounds the script call depth (goja's
	// SetMaxCallStackSize); <= 0 means DefaultMaxCallStackSize.
	MaxCallStackSize int
	// Grace is how long a script may take to settle after its Run's context
	// is done (and onCancel ran) before the runtime is interrupted. 0 means
	// DefaultGrace; a negative value means no grace at all.
	Grace time.Duration
	// Setup runs on the loop, after the timer globals are installed and
	// before New returns (e.g. to install the dsh globals). Its error, a
	// *JSError for a script error, is New's error.
	Setup func(vm *goja.Runtime) error
	// OnError receives errors that belong to no Run: a timer or microtask
	// callback that threw, an onCancel that threw, an unhandled promise
	// rejection, and the reason the loop broke. It is called on the loop
	// goroutine and must not block or call Run; nil discards them.
	OnError func(error)
	// ThrownValue, when set, converts a thrown or rejection object into its
	// Go form for JSError.Value (the glue passes the lossless-JSON
	// conversion); it returns false when the value is not convertible. It
	// runs on the loop and must not call script code. Thrown primitives are
	// converted without it.
	ThrownValue func(vm *goja.Runtime, v goja.Value) (any, bool)
	// MaxErrorText bounds, in bytes, each text a *JSError carries out of
	// the loop (its name, its message, a thrown object's own stack text):
	// a longer one is cut, marked with textcap's marker, after reading only
	// its prefix. <= 0 means DefaultMaxErrorText.
	MaxErrorText int
	// OrphanBudget bounds the busy time of orphan work: script code that
	// runs on behalf of no running Run (timer callbacks, host-work
	// settlements and promise jobs left by Runs that have finished). It is
	// a debt paid back at OrphanBudget per OrphanWindow of wall time; when it
	// reaches OrphanBudget, even in the middle of one entry, the loop breaks
	// with an error matching ErrOrphanWork (see the package documentation).
	// 0 means DefaultOrphanBudget; a negative value turns the bound off.
	OrphanBudget time.Duration
	// OrphanWindow is how long orphan work takes to pay back OrphanBudget;
	// <= 0 means DefaultOrphanWindow.
	OrphanWindow time.Duration
	// Guard configures jsguard, which bounds the goja builtins that recurse
	// in Go or allocate by a requested size (JSON, join, bind, Proxy,
	// repeat, typed arrays...); it is installed after Setup (so the loop
	// and Setup capture goja's own intrinsics) and before any other script
	// code runs. The zero value gives jsguard's defaults.
	Guard jsguard.Options
	// Unguarded leaves goja's builtins as they are (for tests and
	// benchmarks that measure jsguard's cost; never for untrusted code).
	Unguarded bool
	// Enter, when set, is called on the loop each time it enters the
	// runtime to run script code (a Run's job or done, a timer, a
	// settlement, Setup), and the function it returns when that entry ends,
	// its microtasks drained: the glue watches the heap while script code
	// runs (a memory guard that Breaks the loop). Both must be cheap and
	// must not block.
	Enter func(l *Loop) (leave func())
}

// Loop is one goja runtime and the goroutine that owns it. All methods are
// safe for concurrent use; those taking a *goja.Runtime must be called on the
// loop (from fn, done, onCancel, a settle function or a host function).
type Loop struct {
	opts  Options
	grace time.Duration

	// Written by the loop goroutine before New returns; read-only after.
	vm   *goja.Runtime
	goid int64

	// drive is the runtime itself: whoever holds it (the loop goroutine, or
	// a Run's caller driving the loop, see Run) may touch the loop-only
	// state below. After exit it is never released.
	drive token
	// callerDriving is set while a Run's caller holds drive (for Close).
	callerDriving atomic.Bool

	// Cross-goroutine state.
	mu          sync.Mutex
	inbox       []item
	inboxClosed bool
	reason      error // why the loop stopped; nil while it runs
	broken      bool
	stopped     atomic.Bool
	wake        chan struct{} // one slot: "the inbox is not empty"
	quit        chan struct{} // closed when the loop stops for any reason
	brokenCh    chan struct{} // closed when the loop breaks
	done        chan struct{} // closed when the goroutine has exited
	ctx         context.Context
	cancel      context.CancelFunc
	workers     sync.WaitGroup
	// pending counts work run on goroutines of its own (Go, and inline work
	// handed off) whose outcome has not been settled on the loop yet: while
	// there is any, a caller never blocks in inline work, which would hold
	// back an outcome that may come first.
	pending     atomic.Int64
	abandonOnce sync.Once
	gone        chan struct{} // Abandon's: closed when the goroutine and every work function have exited

	// The orphan watchdog's (see orphan.go): when the running orphan entry
	// spends the budget (mono ns, 0 when none), and who arms the timer.
	orphanDeadline atomic.Int64
	wdArmed        atomic.Bool
	orphans        orphanState

	// The overdue watch (see overdue.go): the number of the entry running
	// now (0 between entries), and the Runs past their grace after a
	// cancellation that are still awaited (under mu; overdueN counts them).
	inEntry  atomic.Uint64
	overdue  map[*run]struct{}
	overdueN atomic.Int32

	// Loop-only state below: touched only by whoever holds drive.
	spare    []item
	leftover []item
	entrySeq uint64 // entries made so far: the last one's number

	// driving is the Run whose caller drives the loop now (nil when the
	// loop goroutine does), and inline the work GoInline left for that
	// caller to run once the current entry is over.
	driving *run
	inline  []*inlineWork

	tramp       goja.Callable // runs the current job inside a JS frame
	attach      goja.Callable // attach(promise, id): Go-side then
	microtask   goja.Callable // microtask(resolved, cb)
	gopd        goja.Callable // intrinsic Object.getOwnPropertyDescriptor
	objectProto *goja.Object  // intrinsic Object.prototype
	errorCtor   *goja.Object  // intrinsic Error
	resolved    goja.Value    // an already resolved promise

	// The job for the next tramp call: exactly one is set.
	cur     func()
	curRun  *run
	curDone *run

	// owner is the Run on whose behalf script code runs now (see
	// CallContext): the Run whose job, settlement, host work or timer led to
	// the current entry, or nil.
	owner *run

	active   map[*run]struct{} // started and not finished
	awaiting map[int64]awaited // waiting for their promise, by attach id
	awaitSeq int64
	ready    []*run // settled, waiting for done

	unhandled      map[*goja.Promise]struct{}
	unhandledOrder []*goja.Promise

	timers timerHeap
	byID   map[int64]*timer
	timerN int64
	tmr    *time.Timer
}

type runState int32

const (
	runQueued runState = iota
	runStarted
	runCancelled // the caller gave up before the job started
)

type result struct {
	v   any
	err error
}

type run struct {
	ctx      context.Context
	fn       func(vm *goja.Runtime) (goja.Value, error)
	onCancel func(vm *goja.Runtime)
	done     func(vm *goja.Runtime, v goja.Value, err error) (any, error)
	state    atomic.Int32
	res      chan result // one slot; written exactly once, by the loop
	fin      atomic.Bool // its result is (being) delivered

	// RunWithin's deadline, from when fn starts, and what it runs.
	timeout time.Duration
	expire  func()
	expired atomic.Bool // the deadline passed once; the next is the grace's
	// The timer of the deadline and its grace (hard), of the grace after
	// ctx was cancelled before its deadline (soft), and what stops watching
	// ctx; over once Run returned.
	tmu       sync.Mutex
	hard      *time.Timer
	soft      *time.Timer
	over      bool
	stopWatch func() bool
	// graceEntry is the entry that ran when r's grace began (0: none), and
	// overdue whether r is past its grace after a cancellation, still
	// awaited (see graceOver) while RunForCaller's caller is live; once r
	// is overdue, stopCaller stops watching the caller (under tmu).
	graceEntry atomic.Uint64
	// graceBegun: graceEntry was recorded (the grace's start was seen).
	graceBegun atomic.Bool
	overdue    atomic.Bool
	caller     context.Context
	stopCaller func() bool
	// causedStop: this Run's cancellation interrupted the loop (under mu).
	causedStop bool

	// Loop-only.
	finished bool
	val      goja.Value // fulfilment value or rejection reason
	rejected bool
}

// awaited is a Run waiting for its pending promise, as attached.
type awaited struct {
	r *run
	p *goja.Promise
}

type item struct {
	run   *run   // start this Run, or
	fn    func() // run this job
	owner *run   // on behalf of this Run (fn only), or nil
}

// New starts a loop, runs Setup on it and returns once the loop is ready.
// If Setup fails, the loop is stopped and New returns the error.
func New(opts Options) (*Loop, error) {
	if opts.MaxCallStackSize <= 0 {
		opts.MaxCallStackSize = DefaultMaxCallStackSize
	}
	l := &Loop{
		opts:     opts,
		grace:    opts.Grace,
		wake:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		brokenCh: make(chan struct{}),
		done:     make(chan struct{}),
		active:   make(map[*run]struct{}),
		awaiting: make(map[int64]awaited),
		byID:     make(map[int64]*timer),
	}
	switch {
	case l.grace == 0:
		l.grace = DefaultGrace
	case l.grace < 0:
		l.grace = 0
	}
	l.drive = make(token, 1) // held by the loop goroutine until it serves
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.initOrphans()
	ready := make(chan error, 1)
	go l.main(ready)
	if err := <-ready; err != nil {
		<-l.done
		l.workers.Wait()
		return nil, err
	}
	return l, nil
}

// Run runs fn as a job on the loop and returns done's result.
//
// If fn returns a pending promise, the loop serves other jobs until it
// settles, then runs done on the loop with the fulfilled value, or with a
// *JSError for the rejection. If fn fails, done gets its error (a *JSError for
// a script error). A nil done returns v.Export() and err; a nil onCancel does
// nothing. A nil ctx means context.Background().
//
// If ctx is done before the job starts, Run returns ctx.Err() and fn never
// runs. If it is done later, onCancel runs on the loop and the script has the
// grace period to settle. If script code still runs then, deaf to the
// cancellation, the loop is broken and Run returns an error matching
// ErrInterrupted and ctx.Err(). If the script is waiting instead, nothing is
// interrupted: past ctx's deadline, Run returns an error matching ErrOverdue
// (and ErrInterrupted, and ctx.Err()); after a cancellation before the
// deadline, Run goes on waiting for the script to settle, and an entry that
// runs longer than the grace from then on breaks the loop (see the package
// documentation, "Deadlines"). Run returns ErrClosed after Close and
// ErrInterrupted (or the ErrBroken reason) on a broken loop. Run must not be
// called on the loop itself: it would wait for a job that cannot start.
//
// When the runtime is idle, the caller drives the loop itself (see the
// package documentation, "Who runs the runtime"): fn, done and whatever
// else is due run on the calling goroutine, with no hand-off.
func (l *Loop) Run(ctx context.Context, fn func(vm *goja.Runtime) (goja.Value, error), onCancel func(vm *goja.Runtime), done func(vm *goja.Runtime, v goja.Value, err error) (any, error)) (any, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return l.run(&run{ctx: ctx, fn: fn, onCancel: onCancel, done: done}, true)
}

// RunForCaller is Run for a job whose caller may give up on it apart from
// ctx: ctx is what the script's cancellation stands for (a tool body's
// signal, which a wrapper may abort while the caller still waits for the
// result), caller the caller's own ctx. Past the grace after ctx's
// cancellation, a waiting script is awaited (as Run does) only while caller
// is live: once caller is done as well, Run returns an error matching
// ErrOverdue (and ctx's error), and the script is left behind. A nil caller
// is Run.
func (l *Loop) RunForCaller(ctx, caller context.Context, fn func(vm *goja.Runtime) (goja.Value, error), onCancel func(vm *goja.Runtime), done func(vm *goja.Runtime, v goja.Value, err error) (any, error)) (any, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return l.run(&run{ctx: ctx, caller: caller, fn: fn, onCancel: onCancel, done: done}, true)
}

// RunWithin is Run for a job with a deadline of its own: d after fn starts,
// expire runs (on a timer's goroutine; it typically cancels ctx with the
// deadline's cause), onCancel is posted and, after the grace, the Run ends if
// it has not settled, as Run does past ctx's deadline: the runtime is
// interrupted if the script is running, and the Run returns an error
// matching ErrOverdue if it is waiting. ctx itself is not watched: only its
// Err before the job starts, and CallContext, use it. A caller that cancels
// ctx for another reason must use Run.
func (l *Loop) RunWithin(ctx context.Context, d time.Duration, expire func(), fn func(vm *goja.Runtime) (goja.Value, error), onCancel func(vm *goja.Runtime), done func(vm *goja.Runtime, v goja.Value, err error) (any, error)) (any, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return l.run(&run{ctx: ctx, fn: fn, onCancel: onCancel, done: done, timeout: d, expire: expire}, false)
}

func (l *Loop) run(r *run, watch bool) (any, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	r.res = make(chan result, 1)
	if watch && r.ctx.Done() != nil {
		l.watchCancel(r)
		defer l.unwatch(r)
	}
	if r.timeout > 0 {
		defer r.stopTimer()
	}
	if !l.drive.TryLock() {
		// Another goroutine runs the runtime: wait for it, or for r's
		// outcome (a cancellation before the start), or for the loop's end.
		select {
		case <-l.drive:
		case res := <-r.res:
			return res.v, res.err
		case <-l.quit:
			return l.afterQuit(r)
		}
	}
	if l.stopped.Load() {
		l.drive.Unlock()
		return l.afterQuit(r)
	}
	l.driveFor(r)
	select {
	case res := <-r.res:
		return res.v, res.err
	case <-l.quit:
		return l.afterQuit(r)
	}
}

// watchCancel makes the end of r's ctx cancel r, whoever runs the loop:
// before the job starts, r returns ctx.Err(); after, onCancel is posted and
// the grace begins (see graceOver for its end). unwatch stops watching.
func (l *Loop) watchCancel(r *run) {
	// With a deadline, the hard timer is armed up front for deadline+grace,
	// so that the interrupt does not wait for a goroutine to be scheduled
	// once at the deadline first: with few Ps and a script hogging one,
	// each wake-up can cost a preemption period (10 ms).
	deadline, hasDeadline := r.ctx.Deadline()
	if hasDeadline {
		r.hard = time.AfterFunc(time.Until(deadline)+l.grace, func() { l.graceOver(r, true) })
	}
	r.stopWatch = context.AfterFunc(r.ctx, func() {
		if r.state.CompareAndSwap(int32(runQueued), int32(runCancelled)) {
			r.fin.Store(true)
			r.res <- result{nil, r.ctx.Err()}
			return
		}
		r.graceEntry.Store(l.inEntry.Load())
		r.graceBegun.Store(true)
		l.post(item{fn: func() { l.cancelRun(r) }, owner: r})
		if hasDeadline && errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
			return // the hard timer ends the deadline's grace
		}
		// Cancelled (before its deadline, if any): the grace counts from
		// now, and the deadline keeps its own.
		r.tmu.Lock()
		defer r.tmu.Unlock()
		if !r.over {
			r.soft = time.AfterFunc(l.grace, func() { l.graceOver(r, false) })
		}
	})
}

func (l *Loop) unwatch(r *run) {
	r.stopWatch()
	r.stopTimer()
}

// armTimeout starts RunWithin's deadline as r's job starts (on the loop).
func (l *Loop) armTimeout(r *run) {
	r.tmu.Lock()
	defer r.tmu.Unlock()
	if r.over {
		return
	}
	r.hard = time.AfterFunc(r.timeout, func() { l.expireRun(r) })
}

// expireRun is RunWithin's deadline: the first time, expire runs and
// onCancel is posted, and the timer is armed again for the grace; the second
// time, the loop is interrupted if r has not settled.
func (l *Loop) expireRun(r *run) {
	if r.fin.Load() {
		return
	}
	if !r.expired.Swap(true) {
		if r.expire != nil {
			r.expire()
		}
		r.graceEntry.Store(l.inEntry.Load())
		r.graceBegun.Store(true)
		l.post(item{fn: func() { l.cancelRun(r) }, owner: r})
		r.tmu.Lock()
		if !r.over {
			r.hard.Reset(l.grace)
		}
		r.tmu.Unlock()
		return
	}
	l.graceOver(r, true)
}

// stopTimer stops r's timers (its deadline's, and the grace after a
// cancellation) once Run returns.
func (r *run) stopTimer() {
	r.tmu.Lock()
	r.over = true
	if r.hard != nil {
		r.hard.Stop()
	}
	if r.soft != nil {
		r.soft.Stop()
	}
	if r.stopCaller != nil {
		r.stopCaller()
	}
	r.tmu.Unlock()
}

// afterQuit is Run's answer once the loop stopped: its result if the loop
// delivered one, the stop reason otherwise.
func (l *Loop) afterQuit(r *run) (any, error) {
	select {
	case res := <-r.res:
		return res.v, res.err
	default:
	}
	if r.state.CompareAndSwap(int32(runQueued), int32(runCancelled)) {
		return nil, notStarted{l.Err()}
	}
	l.mu.Lock()
	caused := r.causedStop
	l.mu.Unlock()
	if caused {
		return nil, fmt.Errorf("%w (%w)", ErrInterrupted, r.ctxErr())
	}
	return nil, l.Err()
}

// driveFor runs r's job on the calling goroutine, which holds drive, and
// goes on serving the loop while r is unfinished and jobs are waiting:
// what r's job started and posted (its settlements), and the work it left
// to its caller (GoInline), run meanwhile with the runtime released. It
// returns with drive released and r finished, or left to whoever serves
// the loop next (the loop goroutine was woken for every job posted).
func (l *Loop) driveFor(r *run) {
	l.callerDriving.Store(true)
	l.driving = r
	l.curRun, l.owner = r, r
	l.enter()
	l.afterEnter()
	l.owner = nil
	for !l.stopped.Load() && !r.fin.Load() {
		if len(l.inline) > 0 {
			// Inline work blocks the caller until it returns: that is right
			// only when nothing else can settle first. Several pieces of
			// work (calls that overlap), or work of its own still out, go
			// to goroutines of their own and settle as they come.
			if len(l.inline) > 1 || l.pending.Load() > 0 {
				l.handOff()
				continue
			}
			if !l.runInline() {
				return // drive was released, and another driver holds it now
			}
			continue
		}
		it, ok := l.pop()
		if !ok {
			break
		}
		l.serveItem(it)
	}
	l.release()
}

// release ends a caller's drive: the work it left is handed to goroutines
// of its own, as Go does, and drive is released.
func (l *Loop) release() {
	l.handOff()
	l.driving = nil
	l.callerDriving.Store(false)
	l.drive.Unlock()
}

// handOff hands the inline work left to goroutines of its own, as Go does.
func (l *Loop) handOff() {
	for _, w := range l.inline {
		if l.stopped.Load() {
			l.workers.Done() // its promise can never settle now
			continue
		}
		if w.completes != nil {
			l.attachRun(w.completes, w.p) // as if it had not been linked
		}
		l.spawn(w)
	}
	clear(l.inline)
	l.inline = l.inline[:0]
}

// runInline runs the work left for the driving caller, in order, with the
// runtime released meanwhile (the work may call into this loop again), and
// settles it: at once if it gets the runtime back, through the inbox
// otherwise. It reports whether the caller holds drive again.
func (l *Loop) runInline() bool {
	work := l.inline
	l.inline = nil
	r := l.driving
	l.driving = nil
	l.callerDriving.Store(false)
	l.drive.Unlock()
	for _, w := range work {
		w.v, w.err = runWork(w.ctx, w.work)
	}
	l.workers.Add(-len(work))
	if !l.drive.TryLock() {
		for _, w := range work {
			l.post(item{fn: func() { l.settleInline(w) }, owner: w.owner})
		}
		return false
	}
	l.callerDriving.Store(true)
	l.driving = r
	for _, w := range work {
		if l.stopped.Load() {
			break
		}
		l.cur, l.owner = func() { l.settleInline(w) }, w.owner
		l.enter()
		l.afterEnter()
		l.owner = nil
	}
	return true
}

// settleInline settles the promise of work run inline. When a Run's job
// returned that very promise (a listener's `return next()`), the Run
// completes with its outcome here, without the reactions attach would
// have added.
func (l *Loop) settleInline(w *inlineWork) {
	l.settleGo(w.resolve, w.reject, w.settle, w.v, w.err)
	r := w.completes
	if r == nil || l.stopped.Load() {
		return
	}
	switch w.p.State() {
	case goja.PromiseStateFulfilled:
		l.complete(r, w.p.Result(), nil)
	case goja.PromiseStateRejected:
		delete(l.unhandled, w.p) // handled: by r
		l.complete(r, nil, l.Thrown(l.vm, w.p.Result()))
	default: // resolved with a thenable it now follows
		l.attachRun(r, w.p)
	}
}

// pop takes the first job of the inbox.
func (l *Loop) pop() (item, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.inbox) == 0 {
		return item{}, false
	}
	it := l.inbox[0]
	l.inbox[0] = item{}
	l.inbox = l.inbox[1:]
	return it, true
}

// serveItem runs one job of the inbox.
func (l *Loop) serveItem(it item) {
	if it.run != nil {
		l.curRun, l.owner = it.run, it.run
	} else {
		l.cur, l.owner = it.fn, it.owner
	}
	l.enter()
	l.afterEnter()
	l.owner = nil
}

// Close stops the loop: running script code is interrupted, timers are
// dropped, pending Runs return ErrClosed and Go work contexts are cancelled.
// Unless called while script code runs (from the loop itself, or beside a
// caller driving it: Close cannot tell which), Close then waits until the
// goroutine has exited and every Go work function has returned, so nothing
// outlives it (a work function that ignores its context delays Close; a
// script stuck inside a native function delays it until that returns).
// Close is idempotent and may be called from any goroutine, at any time.
func (l *Loop) Close() {
	l.stop(ErrClosed, false)
	if l.callerDriving.Load() || curGoid() == l.goid {
		// On the loop (or, it cannot tell, beside a caller driving it): it
		// exits once the current job unwinds.
		return
	}
	<-l.done
	l.workers.Wait()
}

// Abandon stops the loop as Close does but never waits: it returns a
// channel closed once the loop goroutine has exited and every Go work
// function has returned. A script stuck inside a native function, or a work
// function that ignores its context, keeps the channel open until it returns.
// Abandon is idempotent and may be called from any goroutine, the loop's and
// its work functions' included.
func (l *Loop) Abandon() <-chan struct{} {
	l.stop(ErrClosed, false)
	l.abandonOnce.Do(func() {
		l.gone = make(chan struct{})
		go func() {
			<-l.done
			l.workers.Wait()
			close(l.gone)
		}()
	})
	return l.gone
}

// Break breaks the loop from outside for cause (a memory watchdog's, say):
// running script code is interrupted, and every pending and later Run returns
// an error wrapping both ErrBroken and cause. It does not wait, may be called
// from any goroutine, and does nothing once the loop has stopped.
func (l *Loop) Break(cause error) {
	l.stop(hostBreak{fmt.Errorf("%w: %w", ErrBroken, cause)}, true)
}

// Broken reports whether the loop was broken: interrupted after a deadline,
// or stopped by a fault. A broken loop never runs script code again.
func (l *Loop) Broken() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.broken
}

// Interrupted returns a channel closed when the loop breaks (interrupt or
// fault), so the glue can replace the instance. Close does not close it.
func (l *Loop) Interrupted() <-chan struct{} { return l.brokenCh }

// Done returns a channel closed when the loop goroutine has exited.
func (l *Loop) Done() <-chan struct{} { return l.done }

// Err returns nil while the loop runs, then why it stopped: ErrClosed,
// ErrInterrupted, or an error wrapping ErrBroken.
func (l *Loop) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reason
}

// stop records the first stop reason, wakes everyone and interrupts running
// script code. It reports whether this call stopped the loop.
func (l *Loop) stop(reason error, broken bool) bool {
	return l.stopBy(nil, reason, broken)
}

// stopFor breaks the loop with reason because r's cancellation ran past
// the grace: r then returns an error matching reason and its ctx's error.
func (l *Loop) stopFor(r *run, reason error) bool { return l.stopBy(r, reason, true) }

func (l *Loop) stopBy(r *run, reason error, broken bool) bool {
	l.mu.Lock()
	if l.reason != nil {
		l.mu.Unlock()
		return false
	}
	if r != nil {
		r.causedStop = true
	}
	l.reason = reason
	l.broken = broken
	l.mu.Unlock()
	l.stopped.Store(true)
	if broken {
		close(l.brokenCh)
	}
	close(l.quit)
	l.cancel()
	// The only call made on the runtime off the loop; goja makes it safe.
	l.vm.Interrupt(reason)
	return true
}

// post queues a job; it never blocks. It fails once the loop has exited.
func (l *Loop) post(it item) bool {
	l.mu.Lock()
	if l.inboxClosed {
		l.mu.Unlock()
		return false
	}
	l.inbox = append(l.inbox, it)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return true
}

func (l *Loop) report(err error) {
	if l.opts.OnError == nil || err == nil {
		return
	}
	defer func() { _ = recover() }() // a failing reporter has nowhere to report to
	l.opts.OnError(err)
}

func (l *Loop) main(ready chan<- error) {
	// The loop goroutine holds drive (from New) but while it waits in serve;
	// it holds it again for exit and never releases it after that.
	defer l.exit()
	l.goid = curGoid()
	if err := l.init(); err != nil {
		err = fmt.Errorf("eventloop: init: %w", err)
		l.stop(err, false)
		ready <- err
		return
	}
	if l.opts.Setup != nil {
		var err error
		l.cur = func() {
			if ex := l.vm.Try(func() { err = l.opts.Setup(l.vm) }); ex != nil {
				err = ex
			}
			err = l.convert(err)
		}
		l.enter()
		l.afterEnter()
		if err == nil && l.stopped.Load() {
			err = l.Err()
		}
		if err != nil {
			err = fmt.Errorf("eventloop: setup: %w", err)
			l.stop(err, false)
			ready <- err
			return
		}
	}
	// jsguard goes in last, once the loop and Setup captured the intrinsics
	// they call themselves (jsvalue's Object functions among them), and
	// before any script code runs.
	if !l.opts.Unguarded {
		if err := jsguard.Install(l.vm, l.opts.Guard); err != nil {
			err = fmt.Errorf("eventloop: init: %w", err)
			l.stop(err, false)
			ready <- err
			return
		}
	}
	ready <- nil
	l.serve()
}

// initSrc is compiled once. Its functions only call what they were given,
// never globals, so scripts that replace globals change nothing.
const initSrc = `(function (enter, apply, then, settled, report) {
  const args = [undefined, undefined]
  return [
    function () { enter() },
    function (p, id) {
      const f = () => settled(id)
      args[0] = f
      args[1] = f
      apply(then, p, args)
      args[0] = args[1] = undefined
    },
    function (resolved, cb) {
      apply(then, resolved, [function () { try { cb() } catch (e) { report(e) } }])
    }
  ]
})`

func (l *Loop) init() error {
	vm := goja.New()
	l.vm = vm
	vm.SetMaxCallStackSize(l.opts.MaxCallStackSize)
	l.tmr = time.NewTimer(time.Hour)
	l.tmr.Stop()

	// Intrinsics, read before any script code ran.
	global := vm.GlobalObject()
	intrinsic := func(path ...string) (goja.Value, error) {
		var v goja.Value = global
		for _, name := range path {
			obj, ok := v.(*goja.Object)
			if !ok {
				return nil, fmt.Errorf("intrinsic %v not found", path)
			}
			v = obj.Get(name)
		}
		return v, nil
	}
	then, err := intrinsic("Promise", "prototype", "then")
	if err != nil {
		return err
	}
	apply, err := intrinsic("Reflect", "apply")
	if err != nil {
		return err
	}
	gopd, err := intrinsic("Object", "getOwnPropertyDescriptor")
	if err != nil {
		return err
	}
	var ok bool
	if l.gopd, ok = goja.AssertFunction(gopd); !ok {
		return errors.New("the intrinsic Object.getOwnPropertyDescriptor is not a function")
	}
	objectProto, err := intrinsic("Object", "prototype")
	if err != nil {
		return err
	}
	if l.objectProto, ok = objectProto.(*goja.Object); !ok {
		return errors.New("the intrinsic Object.prototype is not an object")
	}
	errorCtor, err := intrinsic("Error")
	if err != nil {
		return err
	}
	if l.errorCtor, ok = errorCtor.(*goja.Object); !ok {
		return errors.New("the intrinsic Error is not an object")
	}

	enter := l.native(EntrySource, 0, func(goja.FunctionCall) goja.Value {
		switch {
		case l.curRun != nil:
			r := l.curRun
			l.curRun = nil
			l.startRun(r)
		case l.curDone != nil:
			r := l.curDone
			l.curDone = nil
			l.finishSettled(r)
		case l.cur != nil:
			f := l.cur
			l.cur = nil
			f()
		}
		return goja.Undefined()
	})
	settled := l.native("settled", 1, func(call goja.FunctionCall) goja.Value {
		// Runs inside a promise job: record only, never call into the runtime.
		// The one reaction serves both outcomes: the promise it was attached
		// to is settled by now, and says which.
		id := call.Argument(0).ToInteger()
		if a, ok := l.awaiting[id]; ok {
			delete(l.awaiting, id)
			r := a.r
			r.val = a.p.Result()
			r.rejected = a.p.State() == goja.PromiseStateRejected
			l.ready = append(l.ready, r)
			if r == l.owner && l.orphans.on && l.orphans.from == 0 {
				// r's outcome is known: what its entry goes on doing is left
				// behind, and must not delay done past the budget.
				l.orphanStart()
			}
		}
		return goja.Undefined()
	})
	report := l.native("reportError", 1, func(call goja.FunctionCall) goja.Value {
		// Called from JS (a frame is on the stack), so conversion is nested.
		l.report(fmt.Errorf("eventloop: queueMicrotask callback: %w", l.Thrown(vm, call.Argument(0))))
		return goja.Undefined()
	})

	mk, err := vm.RunScript(EntrySource, initSrc)
	if err != nil {
		return err
	}
	mkf, ok := goja.AssertFunction(mk)
	if !ok {
		return errors.New("init script is not a function")
	}
	fns, err := mkf(goja.Undefined(), enter, apply, then, settled, report)
	if err != nil {
		return err
	}
	arr := fns.(*goja.Object)
	for i, dst := range []*goja.Callable{&l.tramp, &l.attach, &l.microtask} {
		if *dst, ok = goja.AssertFunction(arr.Get(fmt.Sprint(i))); !ok {
			return errors.New("init script returned a non-function")
		}
	}

	p, resolve, _ := vm.NewPromise()
	if err := resolve(goja.Undefined()); err != nil {
		return err
	}
	l.resolved = vm.ToValue(p)

	if l.opts.OnError != nil {
		l.unhandled = make(map[*goja.Promise]struct{})
		vm.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
			// Runs inside reject or then: record only.
			if op == goja.PromiseRejectionReject {
				l.unhandled[p] = struct{}{}
				l.unhandledOrder = append(l.unhandledOrder, p)
			} else {
				delete(l.unhandled, p)
			}
		})
	}
	return l.installTimers()
}

// native makes a Go function callable from JS with a proper name and length
// (goja would name it after the Go symbol).
func (l *Loop) native(name string, length int, f func(goja.FunctionCall) goja.Value) *goja.Object {
	obj := l.vm.ToValue(f).(*goja.Object)
	_ = obj.DefineDataProperty("name", l.vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = obj.DefineDataProperty("length", l.vm.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return obj
}

// serve is the loop goroutine's part: inbox jobs, then due timers, then
// sleep with the runtime released (a Run's caller may drive it meanwhile).
// It returns with drive held.
func (l *Loop) serve() {
	l.orphans.on = l.orphans.budget > 0
	for {
		l.mu.Lock()
		items := l.inbox
		l.inbox = l.spare[:0]
		l.mu.Unlock()
		for i := range items {
			if l.stopped.Load() {
				l.leftover = append(l.leftover, items[i:]...)
				return
			}
			l.serveItem(items[i])
		}
		clear(items)
		l.spare = items[:0]
		if l.stopped.Load() {
			return
		}
		l.runTimers()
		if l.stopped.Load() {
			return
		}
		l.drive.Unlock()
		// The timer is stopped while there are none: its channel never
		// fires then. A driving caller that sets one resets it.
		select {
		case <-l.wake:
		case <-l.tmr.C:
		case <-l.quit:
		}
		l.drive.Lock()
		if l.stopped.Load() {
			return
		}
	}
}

// enter runs the current job inside the trampoline; the microtask queue
// drains when it returns.
func (l *Loop) enter() {
	if l.opts.Enter != nil {
		defer l.opts.Enter(l)()
	}
	defer func() {
		if x := recover(); x != nil {
			l.inEntry.Store(0)
			l.cur, l.curRun, l.curDone, l.owner = nil, nil, nil, nil
			l.stop(fmt.Errorf("%w: %w", ErrBroken, &PanicError{Value: x, Stack: debug.Stack()}), true)
		}
	}()
	if l.orphanEntry() {
		l.orphanStart()
	}
	// The entry's number, for the overdue watch: stored before overdueN is
	// read, as graceOver marks a Run overdue before reading it.
	l.entrySeq++
	seq := l.entrySeq
	l.inEntry.Store(seq)
	var watch *time.Timer
	if l.overdueN.Load() > 0 {
		watch = l.watchEntry(seq)
	}
	_, err := l.tramp(goja.Undefined())
	l.inEntry.Store(0)
	if watch != nil {
		watch.Stop()
	}
	if l.orphans.from != 0 {
		l.orphanEnd()
	}
	if err != nil {
		l.entryFailed(err)
	}
}

// entryFailed handles an error that escaped an entry: jobs catch everything,
// so it escaped the microtask drain, and goja discarded the job queue.
func (l *Loop) entryFailed(err error) {
	ie, so, _ := gojaError(err)
	switch {
	case ie != nil:
		l.stop(ErrInterrupted, true)
	case so != nil:
		l.stop(fmt.Errorf("%w: a stack overflow in a promise job made goja discard its job queue: %w", ErrBroken, stackOverflow(so)), true)
	default:
		// Jobs catch script errors, so this is a bug in the loop; do not format a
		// thrown value here (that could call script code outside an entry).
		l.report(fmt.Errorf("eventloop: an error of type %T escaped a loop job", err))
	}
}

// afterEnter runs what the last drain left: done of settled Runs, each in its
// own entry, and the report of unhandled rejections.
func (l *Loop) afterEnter() {
	for !l.stopped.Load() {
		if len(l.ready) > 0 {
			l.curDone, l.owner = l.ready[0], l.ready[0]
			n := copy(l.ready, l.ready[1:])
			l.ready[n] = nil
			l.ready = l.ready[:n]
			l.enter()
			continue
		}
		if len(l.unhandled) > 0 {
			l.cur = l.reportRejections
			l.enter()
			continue
		}
		l.unhandledOrder = l.unhandledOrder[:0]
		return
	}
}

func (l *Loop) reportRejections() {
	order := l.unhandledOrder
	l.unhandledOrder = nil
	for _, p := range order {
		if _, ok := l.unhandled[p]; !ok {
			continue
		}
		delete(l.unhandled, p)
		l.report(fmt.Errorf("eventloop: unhandled promise rejection: %w", l.Thrown(l.vm, p.Result())))
	}
	clear(l.unhandled)
}

func (l *Loop) startRun(r *run) {
	if !r.state.CompareAndSwap(int32(runQueued), int32(runStarted)) {
		return // the caller gave up before the job started
	}
	if err := r.ctx.Err(); err != nil {
		l.deliver(r, nil, err)
		return
	}
	// The deadline by the clock too: ctx's own timer may not have ended it
	// yet while the hard timer (deadline+grace) already ran, saw r queued
	// and did nothing; a job started now would have no timer left to
	// interrupt it.
	if d, ok := r.ctx.Deadline(); ok && !time.Now().Before(d) {
		l.deliver(r, nil, context.DeadlineExceeded)
		return
	}
	l.active[r] = struct{}{}
	if r.timeout > 0 {
		l.armTimeout(r)
	}
	var (
		v   goja.Value
		err error
	)
	if ex := l.vm.Try(func() { v, err = r.fn(l.vm) }); ex != nil {
		err = ex
	}
	if l.stopped.Load() {
		return // exit delivers the stop reason
	}
	if err != nil {
		l.complete(r, nil, l.convert(err))
		return
	}
	p := promiseOf(v)
	if p == nil {
		l.complete(r, v, nil)
		return
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		l.complete(r, p.Result(), nil)
	case goja.PromiseStateRejected:
		delete(l.unhandled, p) // handled: by this Run
		l.complete(r, nil, l.Thrown(l.vm, p.Result()))
	default:
		for _, w := range l.inline {
			if w.p == p && w.completes == nil {
				w.completes = r // settleInline completes r
				return
			}
		}
		l.attachRun(r, p)
	}
}

// attachRun has r wait for its pending promise p: two reactions attached
// Go-side (see the package documentation) record the outcome for done.
func (l *Loop) attachRun(r *run, p *goja.Promise) {
	l.awaitSeq++
	id := l.awaitSeq
	l.awaiting[id] = awaited{r, p}
	if _, err := l.attach(goja.Undefined(), l.vm.ToValue(p), l.vm.ToValue(id)); err != nil {
		delete(l.awaiting, id)
		if !l.stopped.Load() {
			l.complete(r, nil, l.convert(err))
		}
	}
}

var promiseType = reflect.TypeOf((*goja.Promise)(nil))

// promiseOf returns v's promise if v is a native promise (including subclass
// instances), without running script code.
func promiseOf(v goja.Value) *goja.Promise {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ExportType() != promiseType {
		return nil
	}
	p, _ := obj.Export().(*goja.Promise)
	return p
}

// CallContext returns the context of the Run on whose behalf script code
// runs now: the Run whose job is running, whose settlement is being
// delivered, or which started the host work (Go) or set the timer whose
// outcome is being run, as long as that Run has not finished; otherwise
// nil. Promise jobs drained in an entry count for the entry's Run. Call it
// on the loop, from a Go function the script called: a host function uses
// it to tie its work to the call that asked for it.
func (l *Loop) CallContext() context.Context {
	if r := l.owner; r != nil && !r.finished {
		return r.ctx
	}
	return nil
}

// OwnerContext returns the context of the Run on whose behalf the current
// entry runs (its job, done, a settlement of host work it started, a timer
// it set, and the promise jobs drained in that entry), even once that Run
// has finished: a timer callback gets the context of the Run that set the
// timer. It is nil when the entry runs on behalf of no Run. Unlike
// [Loop.CallContext], it is for attribution (whose log line this is), not
// for tying work to a call that may be over. Call it on the loop.
func (l *Loop) OwnerContext() context.Context {
	if r := l.owner; r != nil {
		return r.ctx
	}
	return nil
}

func (l *Loop) finishSettled(r *run) {
	if r.rejected {
		l.complete(r, nil, l.Thrown(l.vm, r.val))
	} else {
		l.complete(r, r.val, nil)
	}
	r.val = nil
}

// complete runs done and delivers its result.
func (l *Loop) complete(r *run, v goja.Value, err error) {
	if r.finished || l.stopped.Load() {
		return
	}
	if v == nil {
		v = goja.Undefined()
	}
	var (
		out  any
		derr error
	)
	ex := l.vm.Try(func() {
		if r.done == nil {
			if err == nil {
				out = v.Export()
			}
			derr = err
			return
		}
		out, derr = r.done(l.vm, v, err)
	})
	if ex != nil {
		out, derr = nil, ex
	}
	derr = l.convert(derr)
	if l.stopped.Load() {
		return
	}
	l.deliver(r, out, derr)
}

func (l *Loop) deliver(r *run, v any, err error) {
	if r.finished {
		return
	}
	r.finished = true
	delete(l.active, r)
	if !r.fin.Swap(true) { // else endOverdue gave the caller its result
		r.res <- result{v, err}
	}
	if r.overdue.Load() {
		l.unmarkOverdue(r)
	}
	if r == l.owner && l.orphans.on && l.orphans.from == 0 {
		l.orphanStart() // the rest of the entry is left behind by r
	}
}

func (l *Loop) cancelRun(r *run) {
	if r.finished || r.onCancel == nil {
		return
	}
	if _, ok := l.active[r]; !ok {
		return
	}
	if ex := l.vm.Try(func() { r.onCancel(l.vm) }); ex != nil {
		if err := l.convert(ex); !l.stopped.Load() {
			l.report(fmt.Errorf("eventloop: onCancel: %w", err))
		}
	}
}

// convert is ScriptError plus the rule that an interrupted runtime is never
// reused (an interrupt the loop did not cause breaks it too).
func (l *Loop) convert(err error) error {
	if err == nil {
		return nil
	}
	if ie, _, _ := gojaError(err); ie != nil && !l.stopped.Load() {
		l.stop(ErrInterrupted, true)
	}
	return l.ScriptError(l.vm, err)
}

// exit runs on the loop goroutine as it returns: every Run that is still
// waiting gets the stop reason, timers are dropped, work is cancelled.
func (l *Loop) exit() {
	l.mu.Lock()
	l.inboxClosed = true
	items := append(l.leftover, l.inbox...)
	l.inbox, l.leftover, l.spare = nil, nil, nil
	reason, broken := l.reason, l.broken
	l.mu.Unlock()
	if reason == nil {
		reason = ErrClosed
	}
	if broken {
		l.report(reason) // on the loop, like every OnError call
	}
	for _, it := range items {
		if r := it.run; r != nil && r.state.CompareAndSwap(int32(runQueued), int32(runStarted)) {
			r.finished = true
			r.fin.Store(true)
			r.res <- result{nil, notStarted{reason}}
		}
	}
	for r := range l.active {
		if !r.finished {
			r.finished = true
			if r.fin.Swap(true) {
				continue // endOverdue gave the caller its result
			}
			l.mu.Lock()
			caused := r.causedStop
			l.mu.Unlock()
			if caused {
				r.res <- result{nil, fmt.Errorf("%w (%w)", ErrInterrupted, r.ctxErr())}
				continue
			}
			r.res <- result{nil, reason}
		}
	}
	clear(l.active)
	clear(l.awaiting)
	l.ready = nil
	l.cur, l.curRun, l.curDone, l.owner = nil, nil, nil, nil
	l.dropTimers()
	if l.orphans.wd != nil {
		l.orphans.wd.Stop()
	}
	l.orphanDeadline.Store(0)
	l.cancel()
	close(l.done)
}

// curGoid returns the current goroutine's id, parsed from its stack header
// ("goroutine 123 [running]:"). Only Close uses it, to know whether it runs
// on the loop and must not wait for it.
func curGoid() int64 {
	var buf [32]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) {
		return -1
	}
	var id int64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + int64(c-'0')
	}
	return id
}

// token is the runtime as a one-slot channel: whoever took its value holds
// the runtime. A channel rather than a mutex, so that a Run's caller can
// wait for the runtime, for its outcome and for the loop's end at once; its
// waiters are served in order.
type token chan struct{}

// TryLock takes the runtime if it is free.
func (t token) TryLock() bool {
	select {
	case <-t:
		return true
	default:
		return false
	}
}

// Lock waits for the runtime.
func (t token) Lock() { <-t }

// Unlock gives the runtime back; only its holder may.
func (t token) Unlock() { t <- struct{}{} }
