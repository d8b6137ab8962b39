package eventloop

import (
	"context"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// BenchmarkRunTrivial is the actor overhead: post a job, call a compiled JS
// function on the loop, run done, hand the result back.
func BenchmarkRunTrivial(b *testing.B) {
	l, fn, done := loopCalling(b, "(function () { return 1 })")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Run(ctx, fn, nil, done); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTrivialWithDeadline is BenchmarkRunTrivial under a context
// with a deadline, as the engine calls it (one more timer per Run).
func BenchmarkRunTrivialWithDeadline(b *testing.B) {
	l, fn, done := loopCalling(b, "(function () { return 1 })")
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Run(ctx, fn, nil, done); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunAwaitAsync awaits an async body that settles in the microtask
// queue (the Go-side then attachment, no other goroutine).
func BenchmarkRunAwaitAsync(b *testing.B) {
	l, fn, done := loopCalling(b, "(async function () { await null; return 1 })")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Run(ctx, fn, nil, done); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunAwaitGo awaits a promise from Go(), settled from another
// goroutine: Run → host function → work goroutine → settlement posted back →
// resolve → reaction → done.
func BenchmarkRunAwaitGo(b *testing.B) {
	var (
		l    *Loop
		host goja.Callable
	)
	l = newLoop(b, Options{Setup: func(vm *goja.Runtime) error {
		settle := func(vm *goja.Runtime, v any, err error) (goja.Value, error) { return vm.ToValue(v), err }
		work := func(context.Context) (any, error) { return 42, nil }
		host, _ = goja.AssertFunction(vm.ToValue(func(goja.FunctionCall) goja.Value {
			return vm.ToValue(l.Go(vm, nil, work, settle))
		}))
		return nil
	}})
	fn := func(vm *goja.Runtime) (goja.Value, error) { return host(goja.Undefined()) }
	done := func(vm *goja.Runtime, v goja.Value, err error) (any, error) { return v.ToInteger(), err }
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v, err := l.Run(ctx, fn, nil, done)
		if err != nil || v != int64(42) {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkOrphanAccounting is what the orphan budget adds to a Run whose
// entry goes on after it finished (every Run: the drain after done): one
// orphanStart and one orphanEnd, two clock reads. The watchdog's timer is
// armed at most once per budget, so not here.
func BenchmarkOrphanAccounting(b *testing.B) {
	l := &Loop{}
	l.initOrphans()
	defer l.orphans.wd.Stop()
	for b.Loop() {
		l.orphanStart()
		l.orphanEnd()
		l.orphans.debt = 0 // back to back, the entries would spend the budget
	}
}

// loopCalling returns a loop whose setup compiled src, a JS function
// expression, and the job and done of a Run that calls it and returns its
// value as an integer.
func loopCalling(tb testing.TB, src string) (*Loop, func(*goja.Runtime) (goja.Value, error), func(*goja.Runtime, goja.Value, error) (any, error)) {
	tb.Helper()
	var f goja.Callable
	l := newLoop(tb, Options{Setup: func(vm *goja.Runtime) error {
		v, err := vm.RunString(src)
		f, _ = goja.AssertFunction(v)
		return err
	}})
	fn := func(vm *goja.Runtime) (goja.Value, error) { return f(goja.Undefined()) }
	done := func(vm *goja.Runtime, v goja.Value, err error) (any, error) { return v.ToInteger(), err }
	return l, fn, done
}
