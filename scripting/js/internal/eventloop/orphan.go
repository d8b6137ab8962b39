package eventloop

import (
	"fmt"
	"time"
)

const (
	// DefaultOrphanBudget is the busy time orphan work may use when
	// Options.OrphanBudget is zero.
	DefaultOrphanBudget = 250 * time.Millisecond
	// DefaultOrphanWindow is the window of Options.OrphanWindow when it is
	// zero: orphan work using less than 5% of the loop runs forever.
	DefaultOrphanWindow = 5 * time.Second
)

// orphanState is the accounting of orphan work (see the package
// documentation, "Work left behind").
type orphanState struct {
	// Read-only once New returns.
	budget int64 // ns; 0: orphan work is not measured
	rate   float64
	reason error // the stop reason once the budget is spent
	epoch  time.Time
	wd     *time.Timer // runs watch; armed only by whoever set Loop.wdArmed

	// Loop-only.
	on   bool  // serving: entries are measured
	from int64 // when the running entry turned orphan (mono ns); 0: it has not
	debt int64 // orphan busy time not yet paid back (ns)
	at   int64 // when debt was last brought up to date (mono ns)
}

// initOrphans sets the budget up; it runs in New, before the goroutine.
func (l *Loop) initOrphans() {
	o := &l.orphans
	o.epoch = time.Now()
	budget, window := l.opts.OrphanBudget, l.opts.OrphanWindow
	if budget < 0 {
		return
	}
	if budget == 0 {
		budget = DefaultOrphanBudget
	}
	if window <= 0 {
		window = DefaultOrphanWindow
	}
	o.budget = int64(budget)
	o.rate = float64(budget) / float64(window)
	o.reason = fmt.Errorf("%w (%dms)", ErrOrphanWork, budget.Milliseconds())
	o.wd = time.AfterFunc(time.Hour, l.watch)
	o.wd.Stop()
}

// mono is the monotonic time since the loop was made, in ns (at least 1, so
// that 0 can mean "none").
func (l *Loop) mono() int64 { return int64(time.Since(l.orphans.epoch)) + 1 }

// orphanEntry reports whether the entry about to run belongs to no running
// call, so its busy time counts against the budget.
func (l *Loop) orphanEntry() bool {
	return l.orphans.on && (l.owner == nil || l.owner.finished)
}

// orphanStart marks the running entry as orphan from now on and tells the
// watchdog when the rest of the budget runs out.
func (l *Loop) orphanStart() {
	now := l.mono()
	left := l.orphans.start(now)
	l.orphanDeadline.Store(now + left)
	if !l.wdArmed.Load() && l.wdArmed.CompareAndSwap(false, true) {
		l.orphans.wd.Reset(time.Duration(left))
	}
}

// orphanEnd adds the orphan part of the entry that just returned to the debt
// and breaks the loop if that spent the budget (many short entries).
func (l *Loop) orphanEnd() {
	spent := l.orphans.end(l.mono())
	l.orphanDeadline.Store(0)
	if spent {
		l.stop(l.orphans.reason, true)
	}
}

// start pays back the debt for the time since it was last brought up to
// date, notes that orphan work runs from now on, and returns how much of the
// budget is left.
func (o *orphanState) start(now int64) (left int64) {
	if o.debt > 0 {
		o.debt = max(0, o.debt-int64(float64(now-o.at)*o.rate))
	}
	o.at, o.from = now, now
	return o.budget - o.debt
}

// end adds the orphan work since start to the debt and reports whether that
// spent the budget.
func (o *orphanState) end(now int64) (spent bool) {
	o.debt += now - o.from
	o.at, o.from = now, 0
	return o.debt >= o.budget
}

// watch is the watchdog, run by a timer on its own goroutine: it interrupts
// an orphan entry that runs past the rest of the budget (one long callback, a
// microtask drain that never ends), and otherwise re-arms itself for the
// running orphan entry or disarms. It never needs the loop goroutine. Only
// the holder of wdArmed arms the timer, so it is armed at most once at a time.
func (l *Loop) watch() {
	for !l.stopped.Load() {
		dl := l.orphanDeadline.Load()
		if dl == 0 {
			l.wdArmed.Store(false)
			// An entry may have turned orphan after the load without arming
			// (it saw wdArmed set): take the arming back if nobody did.
			if l.orphanDeadline.Load() == 0 || !l.wdArmed.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		now := l.mono()
		if now < dl {
			l.orphans.wd.Reset(time.Duration(dl - now))
			return
		}
		if l.orphanDeadline.Load() == dl { // still the same entry: it overran
			l.stop(l.orphans.reason, true)
			return
		}
	}
}
