package eventloop

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// installSpin defines spin(ms), which keeps the loop busy for ms of wall
// time, and the host functions of installHost.
func installSpin(l **Loop) func(vm *goja.Runtime) error {
	return func(vm *goja.Runtime) error {
		if err := installHost(l, nil)(vm); err != nil {
			return err
		}
		if err := setupHelpers(vm); err != nil {
			return err
		}
		_, err := vm.RunString(`globalThis.spin = (ms) => { const end = Date.now() + ms; while (Date.now() < end) {} };`)
		return err
	}
}

func TestTheOrphanErrorsSayWhatHappened(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{ErrOrphanWork, "eventloop: background work left by a finished call ran past its budget"},
		{ErrNotStarted, "eventloop: the job never started"},
		{notStarted{ErrClosed}, "eventloop: closed"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	if !errors.Is(ErrOrphanWork, ErrInterrupted) || errors.Is(ErrOrphanWork, ErrBroken) {
		t.Error("ErrOrphanWork must match ErrInterrupted and not ErrBroken")
	}
	if err := (notStarted{ErrClosed}); !errors.Is(err, ErrNotStarted) || !errors.Is(err, ErrClosed) {
		t.Error("notStarted must match ErrNotStarted and its reason")
	}
}

func TestWorkAFinishedRunLeftBehindIsInterruptedOnceItSpendsTheBudget(t *testing.T) {
	const budget = 50 * time.Millisecond
	const want = "eventloop: background work left by a finished call ran past its budget (50ms)"
	for _, tc := range []struct {
		name, src string
	}{
		{"an unawaited async loop", `(async () => { for (;;) { await null } })(); "done"`},
		{"a microtask flood", `(function f() { queueMicrotask(f) })(); "done"`},
		{"a flood of promise reactions", `(function f() { Promise.resolve().then(f) })(); "done"`},
		{"a timer chain that re-arms itself at once", `(function tick() { setTimeout(tick, 0) })(); "done"`},
		{"a spinning interval whose ticks each stay under the budget", `setTimeout(function tick() { spin(20); setTimeout(tick, 0) }, 0); "done"`},
		{"a timer callback that spins for 2s", `setTimeout(() => spin(2000), 1); "done"`},
		{"a host-work settlement that loops forever", `add(1, 2).then(() => { for (;;) {} }); "done"`},
		{"a loop inside try/catch left by a sync body", `setTimeout(() => { for (;;) { try { for (;;) {} } catch (e) {} } }, 0); "done"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := newErrSink()
			var l *Loop
			l = newLoop(t, Options{OrphanBudget: budget, Grace: 10 * time.Millisecond, OnError: sink.onError, Setup: installSpin(&l)})
			v, err := runJS(l, context.Background(), tc.src)
			if err != nil || v != "done" {
				t.Fatalf("the Run itself: %v, %v", v, err)
			}
			returned := time.Now()
			waitClosed(t, l.Interrupted(), "Interrupted()")
			if d := time.Since(returned); d > budget+time.Second {
				t.Errorf("broken %v after the Run returned", d)
			}
			waitClosed(t, l.Done(), "Done()")
			reason := l.Err()
			if reason == nil || reason.Error() != want {
				t.Fatalf("Err() = %v, want %q", reason, want)
			}
			if !errors.Is(reason, ErrOrphanWork) || !errors.Is(reason, ErrInterrupted) || errors.Is(reason, ErrBroken) {
				t.Errorf("Err() %v does not match ErrOrphanWork and ErrInterrupted only", reason)
			}
			if err := sink.next(t); err.Error() != want {
				t.Errorf("OnError got %v", err)
			}
			_, err = runJS(l, context.Background(), "1")
			if !errors.Is(err, ErrOrphanWork) || !errors.Is(err, ErrNotStarted) || err.Error() != want {
				t.Errorf("a later Run: %v", err)
			}
		})
	}
}

func TestAnAsyncBodyWhoseDrainNeverEndsFailsAtTheBudgetNotAtItsDeadline(t *testing.T) {
	var l *Loop
	l = newLoop(t, Options{OrphanBudget: 50 * time.Millisecond, Setup: installSpin(&l)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := runJS(l, ctx, `(async () => {
		await null;
		(async () => { for (;;) { await null } })();
		return "done";
	})()`)
	if !errors.Is(err, ErrOrphanWork) || errors.Is(err, ErrNotStarted) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("returned after %v", d)
	}
}

func TestARunningRunsOwnWorkIsBoundedByItsDeadlineNotByTheBudget(t *testing.T) {
	t.Run("a Run that spins longer than the budget before and after an await finishes", func(t *testing.T) {
		var l *Loop
		l = newLoop(t, Options{OrphanBudget: 20 * time.Millisecond, Setup: installSpin(&l)})
		v, err := runJS(l, context.Background(), `(async () => {
			spin(60);
			await add(1, 2);
			spin(60);
			await new Promise((resolve) => setTimeout(() => { spin(60); resolve() }, 0));
			return "done";
		})()`)
		if err != nil || v != "done" || l.Broken() {
			t.Fatalf("got %v, %v; broken %v", v, err, l.Broken())
		}
	})
	t.Run("a Run whose microtasks never end is interrupted at its deadline", func(t *testing.T) {
		var l *Loop
		l = newLoop(t, Options{OrphanBudget: 20 * time.Millisecond, Grace: 10 * time.Millisecond, Setup: installSpin(&l)})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := runJS(l, ctx, `(async () => { for (;;) { await null } })()`)
		if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrOrphanWork) {
			t.Fatalf("got %v", err)
		}
		if d := time.Since(start); d < 200*time.Millisecond || d > 2*time.Second {
			t.Fatalf("returned after %v", d)
		}
	})
}

func TestShortBackgroundWorkDoesNotBreakTheLoop(t *testing.T) {
	t.Run("debounced timers left by many Runs", func(t *testing.T) {
		var l *Loop
		l = newLoop(t, Options{OrphanBudget: 50 * time.Millisecond, Setup: installSpin(&l)})
		for range 20 {
			mustRun(t, l, `setTimeout(() => log.push("flushed"), 10); "done"`)
		}
		mustRun(t, l, `sleep(30)`)
		if v := mustRun(t, l, `log.length`); v != int64(20) || l.Broken() {
			t.Fatalf("flushed %v times; broken %v", v, l.Broken())
		}
	})
	t.Run("a negative budget turns the bound off", func(t *testing.T) {
		var l *Loop
		l = newLoop(t, Options{OrphanBudget: -1, Setup: installSpin(&l)})
		mustRun(t, l, `setTimeout(() => spin(100), 0); (function tick() { setTimeout(tick, 0) })(); "done"`)
		mustRun(t, l, `sleep(200)`)
		if l.Broken() {
			t.Fatalf("broken: %v", l.Err())
		}
	})
}

func TestARunQueuedBehindOrphanWorkFailsAsNotStarted(t *testing.T) {
	var l *Loop
	spinning := make(chan struct{})
	l = newLoop(t, Options{OrphanBudget: 100 * time.Millisecond, Setup: func(vm *goja.Runtime) error {
		if err := installSpin(&l)(vm); err != nil {
			return err
		}
		return vm.Set("spinning", func() { close(spinning) })
	}})
	mustRun(t, l, `setTimeout(() => { spinning(); spin(5000) }, 0); "done"`)
	<-spinning
	var ran bool
	_, err := l.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) {
		ran = true
		return nil, nil
	}, nil, nil)
	if !errors.Is(err, ErrOrphanWork) || !errors.Is(err, ErrNotStarted) {
		t.Fatalf("got %v", err)
	}
	waitClosed(t, l.Done(), "Done()")
	if ran {
		t.Fatal("fn ran")
	}
}

func TestCloseAndAnOrdinaryInterruptAreNotOrphanWork(t *testing.T) {
	sink := newErrSink()
	l := newLoop(t, Options{OrphanBudget: 20 * time.Millisecond, Grace: 10 * time.Millisecond, OnError: sink.onError})
	if _, err := runJSWithin(t, l, 10*time.Millisecond, `for (;;) {}`); !errors.Is(err, ErrInterrupted) || errors.Is(err, ErrOrphanWork) {
		t.Fatalf("got %v", err)
	}
	if err := sink.next(t); err != ErrInterrupted {
		t.Fatalf("OnError got %v", err)
	}
}

func TestIsInterruptTellsInterruptsFromFaults(t *testing.T) {
	l := newLoop(t, Options{})
	l.Break(errors.New("over the memory limit"))
	_, thrown := goja.New().RunString(`throw new Error("boom")`)
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"a deadline's interrupt", ErrInterrupted, true},
		{"the Run's own error after its deadline", fmt.Errorf("%w (%w)", ErrInterrupted, context.DeadlineExceeded), true},
		{"the orphan budget's", fmt.Errorf("%w (%dms)", ErrOrphanWork, 250), true},
		{"a Break", l.Err(), true},
		{"Close", ErrClosed, true},
		{"a Run that never started after Close", notStarted{ErrClosed}, true},
		{"a Go panic on the loop", fmt.Errorf("%w: %w", ErrBroken, &PanicError{Value: "x"}), false},
		{"a script error", &JSError{Name: "Error", Message: "boom"}, false},
		{"a goja exception", fmt.Errorf("wrapped: %w", thrown), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsInterrupt(tc.err); got != tc.want {
				t.Errorf("IsInterrupt(%v) = %v", tc.err, got)
			}
		})
	}
	if err := l.Err(); err.Error() != "eventloop: broken: over the memory limit" || !errors.Is(err, ErrBroken) {
		t.Errorf("the Break reason is %v", err)
	}
}

func TestTheOrphanDebtIsPaidBackAtTheBudgetPerWindow(t *testing.T) {
	const ms = int64(time.Millisecond)
	// A budget of 100 ms per second: 10 ms paid back per 100 ms of wall time.
	type step struct {
		start, end int64 // ms
		left       int64 // ms of budget left at start
		spent      bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"one entry within the budget", []step{{0, 99, 100, false}}},
		{"one entry that reaches it", []step{{0, 100, 100, true}}},
		{"entries back to back add up", []step{{0, 40, 100, false}, {40, 80, 60, false}, {80, 100, 20, true}}},
		{"a pause pays back a tenth of its length", []step{{0, 60, 100, false}, {260, 300, 60, false}}},
		{"the debt is never negative", []step{{0, 10, 100, false}, {10000, 10099, 100, false}}},
		{"work below a tenth of the time runs forever", func() []step {
			var steps []step
			for k := range int64(100) {
				steps = append(steps, step{k * 100, k*100 + 9, 100, false})
			}
			return steps
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := orphanState{budget: 100 * ms, rate: 0.1}
			for k, s := range tc.steps {
				left := o.start(s.start * ms)
				spent := o.end(s.end * ms)
				if left != s.left*ms {
					t.Errorf("step %d: %dms left, want %dms", k, left/ms, s.left)
				}
				if spent != s.spent {
					t.Errorf("step %d: spent %v, want %v", k, spent, s.spent)
				}
			}
		})
	}
}
