package eventloop

import (
	"context"
	"fmt"
	"time"
)

// ErrOverdue is matched by the error of a Run whose deadline and grace
// passed while its script was waiting (a pending await, not running code):
// the Run returns then, without interrupting the runtime, and what its script
// does later is work left behind. It matches ErrInterrupted too, since the
// Run was cut short all the same; the loop is not broken.
var ErrOverdue error = overdueError{}

type overdueError struct{}

func (overdueError) Error() string {
	return "eventloop: the script did not settle within the grace period after its deadline"
}

func (overdueError) Is(target error) bool { return target == ErrInterrupted }

// overdue is the error of Run r ended by endOverdue: it matches ErrOverdue,
// ErrInterrupted and r's context's error.
func overdue(r *run) error {
	return fmt.Errorf("%w (%w)", ErrOverdue, r.ctxErr())
}

// ctxErr is the error of r's context, or context.DeadlineExceeded while
// it is not set yet: the timer of r's deadline and grace may fire before
// the context's own timer has run.
func (r *run) ctxErr() error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	return context.DeadlineExceeded
}

// graceOver runs on a timer's goroutine when r's grace is over: after its
// deadline (deadline set) or after its context was cancelled before its
// deadline. An interrupt is meant for r's script only, and stops the runtime,
// which every pending Run shares, so it comes only when a script is running:
//
//   - The entry that ran when the grace began runs still: it ran through the
//     whole grace, deaf to the cancellation. The runtime is interrupted.
//   - Otherwise, past a deadline, r ends now with an error matching
//     ErrOverdue: the call failed at its deadline; its script, waiting, is
//     left behind. Past a cancellation, r is overdue: it is awaited until it
//     settles (a cancelled call's script may take its time to stop) or, for
//     RunForCaller, until its caller is gone too (then it ends as past a
//     deadline), but from now on no entry may run longer than the grace
//     (see watchEntry).
//   - An entry that started during the grace and runs now gets the grace
//     from now.
//
// If the timer of a deadline fires before ctx's watcher has recorded the
// entry running when the grace began, the grace begins at that moment.
func (l *Loop) graceOver(r *run, deadline bool) {
	if r.fin.Load() || runState(r.state.Load()) != runStarted {
		return
	}
	if !r.graceBegun.Load() {
		// The hard timer fired before the watcher of ctx ran (a loaded
		// machine schedules the two goroutines in any order): which entry
		// ran at the deadline is unknown, so the grace begins now.
		r.graceEntry.Store(l.inEntry.Load())
		r.graceBegun.Store(true)
		r.tmu.Lock()
		if !r.over {
			r.hard.Reset(l.grace)
		}
		r.tmu.Unlock()
		return
	}
	if cur := l.inEntry.Load(); cur != 0 && cur == r.graceEntry.Load() {
		l.stopFor(r, ErrInterrupted)
		return
	}
	if deadline || r.caller != nil && r.caller.Err() != nil {
		l.endOverdue(r)
	} else {
		l.markOverdue(r)
	}
	// Read after marking: an entry that starts meanwhile either sees r
	// overdue (and watches itself) or is seen here.
	if cur := l.inEntry.Load(); cur != 0 {
		l.watchEntry(cur)
	}
}

// endOverdue ends r, past its deadline and grace with its script waiting:
// its caller gets the overdue error now, from this goroutine, and done runs
// later on the loop (so the glue releases what the call held), its result
// dropped. A promise r awaited that settles later finds r finished.
func (l *Loop) endOverdue(r *run) {
	if !r.fin.CompareAndSwap(false, true) {
		return
	}
	l.unmarkOverdue(r)
	err := overdue(r)
	r.res <- result{nil, err}
	l.post(item{fn: func() { l.complete(r, nil, err) }, owner: r})
}

// markOverdue adds r to the Runs past their grace after a cancellation.
func (l *Loop) markOverdue(r *run) {
	l.mu.Lock()
	if !r.overdue.Load() {
		r.overdue.Store(true)
		if l.overdue == nil {
			l.overdue = make(map[*run]struct{})
		}
		l.overdue[r] = struct{}{}
		l.overdueN.Add(1)
	}
	l.mu.Unlock()
	// deliver stores fin, then reads overdue; this stored overdue, then
	// reads fin: one of the two sees the other and unmarks.
	if r.fin.Load() {
		l.unmarkOverdue(r)
		return
	}
	// RunForCaller: r ends once its caller is done (at once if it is).
	if r.caller != nil && r.caller.Done() != nil {
		r.tmu.Lock()
		if !r.over && r.stopCaller == nil {
			r.stopCaller = context.AfterFunc(r.caller, func() { l.endOverdue(r) })
		}
		r.tmu.Unlock()
	}
}

// unmarkOverdue removes r from the overdue Runs, if it is one.
func (l *Loop) unmarkOverdue(r *run) {
	l.mu.Lock()
	if _, ok := l.overdue[r]; ok {
		delete(l.overdue, r)
		l.overdueN.Add(-1)
	}
	l.mu.Unlock()
}

// watchEntry interrupts the runtime if entry seq still runs a grace period
// from now, while a Run is overdue (see graceOver): script code that runs on
// past the grace after its call's cancellation. Entries are numbered, so the
// timer never mistakes a later entry for seq. The Runs overdue then get an
// error matching ErrInterrupted and their context's error.
func (l *Loop) watchEntry(seq uint64) *time.Timer {
	return time.AfterFunc(l.grace, func() {
		if l.inEntry.Load() != seq {
			return
		}
		l.mu.Lock()
		if l.reason == nil {
			for r := range l.overdue {
				r.causedStop = true
			}
		}
		l.mu.Unlock()
		l.stop(ErrInterrupted, true)
	})
}
