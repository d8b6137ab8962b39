package eventloop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// The grace of the overdue tests: long beside a quick entry (so that a
// goroutine switch never makes one look stuck), short beside the test.
const overdueGrace = 100 * time.Millisecond

// cancelledRun runs src with a ctx cancelled once the script called
// started() (a global Setup installs), and returns its outcome.
func cancelledRun(l *Loop, started <-chan struct{}, src string) (any, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	return l.Run(ctx, func(vm *goja.Runtime) (goja.Value, error) {
		return vm.RunString(src)
	}, func(vm *goja.Runtime) {
		if _, err := vm.RunString("globalThis.abort()"); err != nil {
			panic(err)
		}
	}, func(vm *goja.Runtime, v goja.Value, err error) (any, error) {
		if err != nil {
			return nil, err
		}
		return v.Export(), nil
	})
}

// setupAbortable installs setupHelpers, started() (which signals the test)
// and abort(), which onCancel calls: it resolves the promise aborted().
func setupAbortable(started chan<- struct{}) func(vm *goja.Runtime) error {
	return func(vm *goja.Runtime) error {
		if err := setupHelpers(vm); err != nil {
			return err
		}
		if err := vm.Set("started", func() { started <- struct{}{} }); err != nil {
			return err
		}
		_, err := vm.RunString(`
			let onAbort;
			const abortedP = new Promise((r) => { onAbort = r; });
			globalThis.abort = () => onAbort();
			globalThis.aborted = () => abortedP;
		`)
		return err
	}
}

func TestAScriptWaitingPastItsGraceIsNeverInterrupted(t *testing.T) {
	t.Run("a Run cancelled while its script waits is awaited until the script settles", func(t *testing.T) {
		started := make(chan struct{}, 1)
		l := newLoop(t, Options{Grace: overdueGrace, Setup: setupAbortable(started)})
		v, err := cancelledRun(l, started, `(async () => {
			started();
			await aborted();
			log.push("saw the abort");
			await sleep(3 * 100);
			log.push("settled");
			return "settled after the abort";
		})()`)
		if err != nil || v != "settled after the abort" {
			t.Fatalf("got %v, %v", v, err)
		}
		if l.Broken() {
			t.Fatal("the loop is broken")
		}
		if got := mustRun(t, l, `log.join(",")`); got != "saw the abort,settled" {
			t.Fatalf("log %q", got)
		}
	})
	t.Run("a Run whose script waits past its deadline and grace ends without breaking the loop, and other Runs go on", func(t *testing.T) {
		l := newLoop(t, Options{Grace: overdueGrace, Setup: setupHelpers})
		other := make(chan any, 1)
		go func() {
			v, err := runJS(l, context.Background(), `new Promise((r) => { globalThis.release = r; })`)
			if err != nil {
				v = err
			}
			other <- v
		}()
		// The other Run is pending once release exists.
		for mustRun(t, l, `typeof release`) != "function" {
			time.Sleep(time.Millisecond)
		}
		_, err := runJSWithin(t, l, 10*time.Millisecond, `new Promise(() => {})`)
		if !errors.Is(err, ErrOverdue) || !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
		if l.Broken() {
			t.Fatal("the loop is broken")
		}
		mustRun(t, l, `release("the other Run settled")`)
		select {
		case v := <-other:
			if v != "the other Run settled" {
				t.Fatalf("the other Run: %v", v)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the other Run did not return")
		}
	})
	t.Run("an overdue Run's done still runs, once, on the loop", func(t *testing.T) {
		l := newLoop(t, Options{Grace: overdueGrace})
		dones := make(chan error, 2)
		err := withDeadline(t, 10*time.Millisecond, func(ctx context.Context) error {
			_, err := l.Run(ctx, func(vm *goja.Runtime) (goja.Value, error) {
				return vm.RunString(`new Promise((r) => { globalThis.late = r; })`)
			}, nil, func(_ *goja.Runtime, _ goja.Value, err error) (any, error) {
				dones <- err
				return nil, err
			})
			return err
		})
		if !errors.Is(err, ErrOverdue) {
			t.Fatalf("got %v", err)
		}
		if err := <-dones; !errors.Is(err, ErrOverdue) {
			t.Fatalf("done got %v", err)
		}
		mustRun(t, l, `late("too late")`)
		mustRun(t, l, "0")
		if len(dones) != 0 {
			t.Fatalf("done ran again: %v", <-dones)
		}
	})
}

func TestAScriptRunningPastItsGraceIsInterrupted(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		{"a cancelled script that spins before it ever waits", `started(); for (;;) {}`},
		{"a cancelled script that waits past its grace, then spins", `(async () => {
			started();
			await aborted();
			await sleep(3 * 100);
			for (;;) {}
		})()`},
		{"a cancelled script that spins in a timer it set before the abort", `(async () => {
			setTimeout(() => { for (;;) {} }, 3 * 100);
			started();
			await new Promise(() => {});
		})()`},
	} {
		t.Run(c.name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			l := newLoop(t, Options{Grace: overdueGrace, Setup: setupAbortable(started)})
			_, err := cancelledRun(l, started, c.src)
			if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) || errors.Is(err, ErrOverdue) {
				t.Fatalf("got %v", err)
			}
			if !l.Broken() {
				t.Fatal("the loop is not broken")
			}
		})
	}
}

func TestARunForCallerIsAwaitedPastItsGraceOnlyWhileItsCallerWaits(t *testing.T) {
	wait := `(async () => { started(); await new Promise(() => {}); })()`
	runFor := func(l *Loop, ctx, caller context.Context) <-chan error {
		res := make(chan error, 1)
		go func() {
			_, err := l.RunForCaller(ctx, caller, func(vm *goja.Runtime) (goja.Value, error) {
				return vm.RunString(wait)
			}, nil, nil)
			res <- err
		}()
		return res
	}
	t.Run("a Run whose caller gave up ends once the grace passed while its script waits, and the loop goes on", func(t *testing.T) {
		started := make(chan struct{}, 1)
		l := newLoop(t, Options{Grace: overdueGrace, Setup: setupAbortable(started)})
		caller, giveUp := context.WithCancel(context.Background())
		defer giveUp()
		ctx, cancel := context.WithCancel(caller)
		defer cancel()
		res := runFor(l, ctx, caller)
		<-started
		giveUp()
		select {
		case err := <-res:
			if !errors.Is(err, ErrOverdue) || !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the Run did not return")
		}
		if l.Broken() {
			t.Fatal("the loop is broken")
		}
		mustRun(t, l, "0")
	})
	t.Run("a Run whose signal aborted while its caller waits is awaited, and left behind once the caller gives up", func(t *testing.T) {
		started := make(chan struct{}, 1)
		l := newLoop(t, Options{Grace: overdueGrace, Setup: setupAbortable(started)})
		caller, giveUp := context.WithCancel(context.Background())
		defer giveUp()
		ctx, abort := context.WithCancel(caller)
		res := runFor(l, ctx, caller)
		<-started
		abort()
		select {
		case err := <-res:
			t.Fatalf("the Run returned while its caller waited: %v", err)
		case <-time.After(3 * overdueGrace):
		}
		giveUp()
		select {
		case err := <-res:
			if !errors.Is(err, ErrOverdue) {
				t.Fatalf("got %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the Run did not return once its caller gave up")
		}
		if l.Broken() {
			t.Fatal("the loop is broken")
		}
	})
}
