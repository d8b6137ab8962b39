package eventloop

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/internal/testtime"
)

// inlineHost installs next(x): GoInline work that runs f(x) (as a listener's
// next() runs the rest of its chain) and records on which goroutine it ran,
// and stuck(): a synchronous host function that blocks until release is
// closed, through Block.
type inlineHost struct {
	l       *Loop
	f       func(x float64) (any, error)
	workG   atomic.Int64
	release chan struct{}
}

func (h *inlineHost) setup(vm *goja.Runtime) error {
	if err := vm.Set("next", func(call goja.FunctionCall) goja.Value {
		x := call.Argument(0).ToFloat()
		return vm.ToValue(h.l.GoInline(vm, context.Background(), func(context.Context) (any, error) {
			h.workG.Store(curGoid())
			return h.f(x)
		}, func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
			if err != nil {
				return nil, err
			}
			return vm.ToValue(v), nil
		}))
	}); err != nil {
		return err
	}
	return vm.Set("stuck", func(goja.FunctionCall) goja.Value {
		v, err := h.l.Block(func() (any, error) {
			<-h.release
			return "released", nil
		})
		if err != nil {
			panic(vm.NewGoError(err))
		}
		return vm.ToValue(v)
	})
}

func newInlineLoop(t *testing.T, opts Options, f func(x float64) (any, error)) (*Loop, *inlineHost) {
	t.Helper()
	h := &inlineHost{f: f, release: make(chan struct{})}
	opts.Setup = func(vm *goja.Runtime) error {
		if err := setupHelpers(vm); err != nil {
			return err
		}
		return h.setup(vm)
	}
	h.l = newLoop(t, opts)
	return h.l, h
}

func TestAnIdleLoopRunsTheJobOnTheCallersGoroutine(t *testing.T) {
	l := newLoop(t, Options{})
	me := curGoid()
	// The loop goroutine may still hold the runtime for a moment after New
	// or after serving a job; the runtime is idle soon after.
	for range 200 {
		var jobG int64
		if _, err := l.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) {
			jobG = curGoid()
			return goja.Undefined(), nil
		}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if jobG == me {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no job ran on the caller's goroutine")
}

// waitIdle waits until the loop goroutine has released the runtime, so
// that the next Run's caller drives it.
func waitIdle(t *testing.T, l *Loop) {
	t.Helper()
	for range 5000 {
		if l.drive.TryLock() {
			l.drive.Unlock()
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the loop never became idle")
}

func TestWorkGoInlineLeavesForTheDrivingCallerRunsOnItsGoroutine(t *testing.T) {
	l, h := newInlineLoop(t, Options{}, func(x float64) (any, error) { return x * 2, nil })
	t.Run("a job that returns the work's own promise completes with its value", func(t *testing.T) {
		waitIdle(t, l)
		if v := mustRun(t, l, "next(21)"); v != int64(42) {
			t.Fatalf("got %#v", v)
		}
		if g := h.workG.Load(); g != curGoid() {
			t.Fatalf("the work ran on goroutine %d, not on the caller's (%d)", g, curGoid())
		}
	})
	t.Run("an async job awaiting several of them completes", func(t *testing.T) {
		if v := mustRun(t, l, "(async () => (await next(1)) + (await next(2)) + (await next(3)))()"); v != int64(12) {
			t.Fatalf("got %#v", v)
		}
	})
	t.Run("work started from a timer, with no caller driving, runs on a goroutine of its own", func(t *testing.T) {
		if v := mustRun(t, l, "(async () => { await sleep(5); return next(5) })()"); v != int64(10) {
			t.Fatalf("got %#v", v)
		}
		if g := h.workG.Load(); g == curGoid() {
			t.Fatal("the work ran on the caller's goroutine, which was not driving the loop")
		}
	})
}

func TestAFailedInlineWorkRejectsTheJobThatReturnedItsPromise(t *testing.T) {
	sink := newErrSink()
	l, _ := newInlineLoop(t, Options{OnError: sink.onError}, func(float64) (any, error) { return nil, errors.New("the rest of the chain failed") })
	_, err := runJS(l, context.Background(), "next(1)")
	var je *JSError
	if !errors.As(err, &je) || !strings.Contains(je.Message, "the rest of the chain failed") {
		t.Fatalf("got %v", err)
	}
	// The rejection was handled by the Run: nothing is reported as unhandled.
	mustRun(t, l, "1")
	if errs := sink.all(); len(errs) != 0 {
		t.Fatalf("reported: %v", errs)
	}
	if v := mustRun(t, l, "next(1).catch(e => 'caught: ' + e.message)"); v != "caught: the rest of the chain failed" {
		t.Fatalf("got %#v", v)
	}
}

func TestInlineWorkMayRunAnotherJobOnTheSameLoop(t *testing.T) {
	var l *Loop
	l, _ = newInlineLoop(t, Options{}, func(x float64) (any, error) {
		// The rest of a chain whose next listener lives in the same
		// instance: the runtime is released while the work runs.
		return runJS(l, context.Background(), "(async () => 100 + (await next2()))()")
	})
	// next2 is plain Go work, as the end of a chain.
	mustRun(t, l, "1")
	if _, err := l.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) {
		return goja.Undefined(), vm.Set("next2", func(goja.FunctionCall) goja.Value {
			return vm.ToValue(l.GoInline(vm, nil, func(context.Context) (any, error) { return 7, nil }, nil))
		})
	}, nil, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan any, 1)
	go func() { done <- mustRun(t, l, "(async () => 1 + (await next(0)))()") }()
	select {
	case v := <-done:
		if v != int64(108) {
			t.Fatalf("got %#v", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the nested run deadlocked")
	}
}

func TestAJobThatDoesNotAwaitItsInlineWorkStillSeesItRun(t *testing.T) {
	ran := make(chan struct{}, 1)
	l, _ := newInlineLoop(t, Options{}, func(float64) (any, error) {
		ran <- struct{}{}
		return 1, nil
	})
	if v := mustRun(t, l, "globalThis.p = next(0); 'early'"); v != "early" {
		t.Fatalf("got %#v", v)
	}
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the work never ran")
	}
	// Its promise settles, and later jobs see it.
	deadline := time.Now().Add(5 * time.Second)
	for mustRun(t, l, "(async () => { let s = 'pending'; p.then(() => s = 'settled'); await null; await null; return s })()") != "settled" {
		if time.Now().After(deadline) {
			t.Fatal("the promise never settled")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestACallerStuckInABlockingHostFunctionReturnsAtItsDeadline(t *testing.T) {
	l, h := newInlineLoop(t, Options{Grace: 20 * time.Millisecond}, nil)
	defer close(h.release)
	start := time.Now()
	_, err := runJSWithin(t, l, 30*time.Millisecond, "try { stuck() } catch (e) {} 'unreachable'")
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("returned after %v", d)
	}
	if !l.Broken() {
		t.Fatal("the loop is not broken")
	}
}

func TestBlockRunsInPlaceOnTheLoopGoroutine(t *testing.T) {
	l, h := newInlineLoop(t, Options{}, nil)
	close(h.release)
	// From a timer callback, the loop goroutine runs the script.
	if v := mustRun(t, l, "(async () => { await sleep(1); return stuck() })()"); v != "released" {
		t.Fatalf("got %#v", v)
	}
	if v := mustRun(t, l, "stuck()"); v != "released" {
		t.Fatalf("got %#v", v)
	}
}

func TestRunWithinCancelsAJobPastItsOwnDeadline(t *testing.T) {
	// The deadline is what the test is about: scaled (internal/testtime),
	// so that a job meant to settle in time does on a loaded machine.
	deadline, grace := testtime.D(30*time.Millisecond), testtime.D(20*time.Millisecond)
	l := newLoop(t, Options{Grace: grace, Setup: setupHelpers})
	var expired, cancelled atomic.Int32
	runWithin := func(src string) (any, error) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		return l.RunWithin(ctx, deadline, func() {
			expired.Add(1)
			cancel(errors.New("the listener's deadline"))
		}, func(vm *goja.Runtime) (goja.Value, error) {
			return vm.RunString(src)
		}, func(*goja.Runtime) { cancelled.Add(1) }, func(vm *goja.Runtime, v goja.Value, err error) (any, error) {
			if err != nil {
				return nil, err
			}
			return v.Export(), nil
		})
	}
	t.Run("a job that settles in time never sees its deadline", func(t *testing.T) {
		if v, err := runWithin("(async () => { await sleep(1); return 'in time' })()"); err != nil || v != "in time" {
			t.Fatalf("got %v, %v", v, err)
		}
		time.Sleep(2 * deadline)
		if expired.Load() != 0 || cancelled.Load() != 0 {
			t.Fatalf("expired %d, cancelled %d", expired.Load(), cancelled.Load())
		}
	})
	t.Run("a job that never settles is cancelled, then interrupted after the grace", func(t *testing.T) {
		start := time.Now()
		_, err := runWithin("new Promise(() => {})")
		if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
		if d := time.Since(start); d < deadline+grace {
			t.Fatalf("interrupted after %v, before deadline and grace", d)
		}
		if expired.Load() != 1 || cancelled.Load() != 1 {
			t.Fatalf("expired %d, cancelled %d", expired.Load(), cancelled.Load())
		}
	})
}

// TestOverlappingInlineWorkSettlesAsItComes: inline work blocks its caller
// until it returns, so when a job leaves several (calls that overlap), they
// run on goroutines of their own, and the first to end settles first: a job
// awaiting a quick one is not held back by a slow one left before it.
func TestOverlappingInlineWorkSettlesAsItComes(t *testing.T) {
	slow := make(chan struct{})
	defer close(slow)
	l, _ := newInlineLoop(t, Options{}, func(x float64) (any, error) {
		if x < 0 {
			<-slow // the slow work: ends when the test does
		}
		return x * 2, nil
	})
	waitIdle(t, l)
	done := make(chan any, 1)
	go func() { done <- mustRun(t, l, "(async () => { next(-1).catch(() => {}); return await next(21) })()") }()
	select {
	case v := <-done:
		if v != int64(42) {
			t.Fatalf("got %#v", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the quick work's outcome waited for the slow work")
	}
}
