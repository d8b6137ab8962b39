package lua

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// An interrupt is meant for one call's script, and only when its Lua code
// runs on (or is stuck in a host function) past its grace. A call that waits
// in a re-entrant host call (tools.call, a listener's next(), exec.elicit)
// when its grace is over is not running anything that needs stopping:
//
//   - after an abort (its signal aborted: a wrapper's, its caller's), it is
//     overdue: it is awaited until it returns, as a started body is after
//     its abort, while its caller waits for it (once the caller gave up,
//     its wait ends as below), but each time its code goes on running it
//     has the grace to return or wait again before it is stopped;
//   - after its deadline, its wait ends at once (the host call raises) and
//     the call fails with its deadline's error; the same watch applies to
//     the code that runs on.
//
// Stopping a call served nested (a composite tool's nested call, a body
// reached through a wrapper's next()) cancels the context of its own that
// it runs under: its Lua code raises at the next instruction and unwinds,
// and the frames below it (the composite tool waiting in tools.call for it)
// go on in the same instance. The instance is then retired: once the calls
// under way on it have returned, it is interrupted and replaced, as one
// whose outermost call was stopped (or whose stopped call stays stuck in a
// host function for a grace more) is at once.

// errRetired is the cause of an instance retired after a call was stopped
// in it.
var errRetired = errors.New("a call was stopped in the plugin's Lua instance, which is replaced")

// overdueState is a frame's part in that: written under frame.mu except for
// the atomics.
type overdueState struct {
	resumes      atomic.Uint64 // times the frame's code began or went on running
	graceResumes atomic.Uint64 // resumes when its grace began
	overdue      atomic.Bool   // past its grace, still running or awaited
	cause        error         // why it is overdue
	abandoned    bool          // its deadline's grace passed, or its caller gave up, while it waited
	soft         *time.Timer   // the grace after its caller's cancellation
	stopGiveUp   func() bool   // stops watching callSpec.giveUp, once overdue
	stopped      bool          // interruptFrame stopped it
	// stop cancels a nested frame's own context (see runFrame).
	stop context.CancelCauseFunc
}

// deadlineCause is why ctx ended at its deadline; the timer of the
// deadline's grace may run before ctx's own has ended it.
func deadlineCause(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return context.DeadlineExceeded
}

// setRunning records that the owner goroutine runs f's code from now on (nil:
// it waits) and returns the frame it ran before. A frame that goes on
// running while overdue has the grace from now.
func (i *instance) setRunning(f *frame) *frame {
	prev := i.running.Swap(f)
	if f != nil {
		f.od.resumes.Add(1)
		// graceOver sets overdue, then reads running: one of the two sees
		// the other.
		if f.od.overdue.Load() {
			i.watchResumed(f)
		}
	}
	return prev
}

// graceBegins notes where f's code was when its grace began.
func (f *frame) graceBegins() { f.od.graceResumes.Store(f.od.resumes.Load()) }

// graceOver runs when f's grace is over, after its deadline (deadline set)
// or its caller's cancellation, for cause. If f's code ran through the whole
// grace without waiting, the instance is interrupted; otherwise f is
// overdue, and its wait, past a deadline, ends.
func (i *instance) graceOver(f *frame, cause error, deadline bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished {
		return
	}
	if i.running.Load() == f && f.od.resumes.Load() == f.od.graceResumes.Load() {
		i.interruptFrame(f, cause)
		return
	}
	if !f.od.overdue.Load() || deadline {
		f.od.cause = cause
		f.od.overdue.Store(true)
	}
	switch g := f.spec.giveUp; {
	case deadline || g != nil && g.Err() != nil:
		i.abandonLocked(f)
	case g != nil && g.Done() != nil && f.od.stopGiveUp == nil:
		// Awaited while its caller waits: its wait ends once the caller
		// gives up (AfterFunc calls at once if it already did).
		f.od.stopGiveUp = context.AfterFunc(g, func() { i.callerGone(f) })
	}
	if i.running.Load() == f {
		i.watchResumedLocked(f)
	}
}

// callerGone runs when the caller of f, a body past its grace, gave up on
// it: f's wait ends as past a deadline.
func (i *instance) callerGone(f *frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.finished {
		i.abandonLocked(f)
	}
}

// abandonLocked ends f's wait, if it waits, with its overdue cause (with
// f.mu held).
func (i *instance) abandonLocked(f *frame) {
	if f.od.abandoned {
		return
	}
	f.od.abandoned = true
	f.cause.Store(causeBox{f.od.cause})
	i.pokeAwait()
}

// pokeAwait wakes the await that waits, if any: it checks whether its
// frame's wait is to end.
func (i *instance) pokeAwait() {
	select {
	case i.poke <- struct{}{}:
	default:
	}
}

// watchResumed interrupts the instance if f, overdue, still runs the same
// stretch of code a grace period from now.
func (i *instance) watchResumed(f *frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i.watchResumedLocked(f)
}

func (i *instance) watchResumedLocked(f *frame) {
	if f.finished {
		return
	}
	n := f.od.resumes.Load()
	time.AfterFunc(i.pool.host.grace(), func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.finished || i.running.Load() != f || f.od.resumes.Load() != n {
			return
		}
		i.interruptFrame(f, f.od.cause)
	})
}

// interruptFrame stops f's Lua code for cause (with f.mu held): a nested
// frame through its own context, the outermost through the instance's. A
// nested frame that has not returned a grace period later is stuck in a
// host function, and the instance is interrupted.
func (i *instance) interruptFrame(f *frame, cause error) {
	f.cause.Store(causeBox{cause})
	if f.od.stop == nil {
		i.interrupt(cause)
		return
	}
	if f.od.stopped {
		return
	}
	f.od.stopped = true
	f.od.overdue.Store(true) // runFrame reads stoppedError
	i.retire.Store(true)
	f.od.cause = cause
	i.pool.log.Info(f.spec.what + " stopped: " + cause.Error())
	f.od.stop(cause)
	i.pokeAwait()
	time.AfterFunc(i.pool.host.grace(), func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.finished {
			i.interrupt(cause)
		}
	})
}

// stoppedError is the error of a frame that interruptFrame stopped, or
// whose wait ended at its deadline; nil for any other.
func (f *frame) stoppedError() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.od.abandoned && !f.od.stopped {
		return nil
	}
	return callInterrupted(f.spec.what, f.od.cause)
}
