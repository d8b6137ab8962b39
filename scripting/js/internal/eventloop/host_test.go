package eventloop

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// installHost defines host functions built on Go:
//
//	add(a, b)     resolves with a+b computed on another goroutine
//	fail(msg)     rejects with a Go error
//	badSettle()   settle fails to convert
//	panicky()     work panics
//	block()       work waits for its context; resolves with "cancelled"
func installHost(l **Loop, blocked chan<- struct{}) func(vm *goja.Runtime) error {
	return func(vm *goja.Runtime) error {
		toJS := func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
			if err != nil {
				return nil, err
			}
			return vm.ToValue(v), nil
		}
		for name, fn := range map[string]func(goja.FunctionCall) goja.Value{
			"add": func(call goja.FunctionCall) goja.Value {
				a, b := call.Argument(0).ToFloat(), call.Argument(1).ToFloat()
				return vm.ToValue((*l).Go(vm, nil, func(context.Context) (any, error) { return a + b, nil }, toJS))
			},
			"fail": func(call goja.FunctionCall) goja.Value {
				msg := call.Argument(0).String()
				return vm.ToValue((*l).Go(vm, context.Background(), func(context.Context) (any, error) { return nil, errors.New(msg) }, nil))
			},
			"badSettle": func(call goja.FunctionCall) goja.Value {
				return vm.ToValue((*l).Go(vm, nil, func(context.Context) (any, error) { return 1, nil },
					func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
						return nil, fmt.Errorf("cannot convert %v", v)
					}))
			},
			"panicky": func(call goja.FunctionCall) goja.Value {
				return vm.ToValue((*l).Go(vm, nil, func(context.Context) (any, error) { panic("in work") }, nil))
			},
			"block": func(call goja.FunctionCall) goja.Value {
				return vm.ToValue((*l).Go(vm, context.Background(), func(ctx context.Context) (any, error) {
					blocked <- struct{}{}
					<-ctx.Done()
					return "cancelled", nil
				}, toJS))
			},
		} {
			if err := vm.Set(name, fn); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestGoSettlesAPromiseFromAnotherGoroutine(t *testing.T) {
	var l *Loop
	l = newLoop(t, Options{Setup: installHost(&l, nil)})
	if v := mustRun(t, l, "(async () => await add(2, 3) + await add(10, 0))()"); v != int64(15) {
		t.Fatalf("got %#v", v)
	}
	if v := mustRun(t, l, "add(1, 1)"); v != int64(2) {
		t.Fatalf("a Go promise returned directly: %#v", v)
	}
}

func TestGoRejectsWithAPlainErrorCarryingTheGoErrorsText(t *testing.T) {
	var l *Loop
	l = newLoop(t, Options{Setup: installHost(&l, nil)})
	got := mustRun(t, l, `(async () => {
		const out = [];
		for (const p of [fail('disk full'), badSettle(), panicky()]) {
			try { await p } catch (e) { out.push(e instanceof Error, Object.getPrototypeOf(e) === Error.prototype, e.message, 'value' in e) }
		}
		return out.join('|');
	})()`)
	want := "true|true|disk full|false|true|true|cannot convert 1|false|true|true|eventloop: panic: in work|false"
	if got != want {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

func TestGoWorkContextIsCancelledWhenTheLoopCloses(t *testing.T) {
	var l *Loop
	blocked := make(chan struct{}, 1)
	l, err := New(Options{Setup: installHost(&l, blocked)})
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() {
		_, err := runJS(l, context.Background(), "block()")
		res <- err
	}()
	<-blocked
	l.Close() // returns only once the work function has returned
	if err := <-res; !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v", err)
	}
}

func TestGoWorkContextIsCancelledWhenTheLoopIsInterrupted(t *testing.T) {
	var l *Loop
	blocked := make(chan struct{}, 1)
	l = newLoop(t, Options{Grace: 5 * time.Millisecond, Setup: installHost(&l, blocked)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The script spins past its grace (a waiting one would not be
	// interrupted): the interrupt stops the loop, which cancels the work.
	// ctx is cancelled once the work runs, so the script is surely spinning
	// by then however slow the machine is.
	res := make(chan error, 1)
	go func() {
		_, err := runJS(l, ctx, "block(); for (;;) {}")
		res <- err
	}()
	<-blocked
	cancel()
	if err := <-res; !errors.Is(err, ErrInterrupted) || errors.Is(err, ErrOverdue) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	l.Close()
}

func TestASpinningScriptIsInterruptedAtItsDeadlineEvenWithNoGrace(t *testing.T) {
	// With no grace the timer that ends the grace fires as the deadline
	// passes, as the watcher of ctx does: whichever runs first, a script
	// spinning through its deadline is interrupted, never taken for a
	// waiting one (ErrOverdue) and left spinning.
	for i := range 20 {
		l := newLoop(t, Options{Grace: -1, Setup: func(vm *goja.Runtime) error { return nil }})
		_, err := runJSWithin(t, l, 20*time.Millisecond, "for (;;) {}")
		if !errors.Is(err, ErrInterrupted) || errors.Is(err, ErrOverdue) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("run %d: got %v", i, err)
		}
		l.Close()
	}
}

func TestAGoSettlementIsDroppedAfterClose(t *testing.T) {
	var l *Loop
	release := make(chan struct{})
	var settled atomic.Bool
	l, err := New(Options{Setup: func(vm *goja.Runtime) error {
		return vm.Set("slow", func() goja.Value {
			return vm.ToValue(l.Go(vm, nil, func(context.Context) (any, error) {
				<-release
				return 1, nil
			}, func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
				settled.Store(true)
				return nil, nil
			}))
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, l, "slow(); 0")
	go func() { time.Sleep(10 * time.Millisecond); close(release) }()
	l.Close()
	if settled.Load() {
		t.Fatal("settle ran after Close")
	}
}
