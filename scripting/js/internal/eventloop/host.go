package eventloop

import (
	"context"
	"runtime/debug"

	"github.com/dop251/goja"
)

// Go is the host-async mechanism: called on the loop by a Go-implemented JS
// function, it returns a pending promise, runs work on its own goroutine, and
// posts the outcome back to the loop, where settle turns it into the
// resolution value (settle's error, or a panic in it, rejects instead: a
// *goja.Exception rejects with its thrown value, any other error with a plain
// Error carrying the error's text). A nil settle resolves with vm.ToValue(v)
// and rejects with work's error; real callers convert with the jsvalue
// package instead.
//
// work's context is ctx (nil means none), also cancelled when the loop closes
// or breaks; work should return promptly once it is done, since Close waits
// for running work functions. A panic in work is recovered and rejects the
// promise with a *PanicError's text; it does not break the loop, because no
// script code was on the goroutine. If the loop has stopped by the time work
// returns, the outcome is dropped.
func (l *Loop) Go(vm *goja.Runtime, ctx context.Context, work func(ctx context.Context) (any, error), settle func(vm *goja.Runtime, v any, err error) (goja.Value, error)) *goja.Promise {
	p, resolve, reject := vm.NewPromise()
	l.workers.Add(1)
	l.spawn(&inlineWork{ctx: ctx, work: work, settle: settle, resolve: resolve, reject: reject, owner: l.owner})
	return p
}

// GoInline is Go for work whose outcome the caller driving the loop waits
// for anyway (a listener's next(), which runs the rest of its chain): when
// the current entry runs on behalf of the Run whose caller drives the loop
// (see Run), the work runs on that caller's goroutine once the entry is
// over, with the runtime released meanwhile (the work may call into this
// loop again), and settles without a goroutine switch. Otherwise it is Go.
//
// It runs inline only when it is the one piece of work the entry left and
// no work of the loop's own goroutines is out: work that blocks its caller
// must not hold back an outcome that could come first (calls that overlap).
// Otherwise it runs on a goroutine of its own, as Go.
//
// Two things differ from Go when it runs inline: work's context is ctx
// itself (the caller is waiting, so the loop's end need not cancel it), and
// the driving Run returns only after the work did, even if it settled
// earlier (a listener that races next() against a timer).
func (l *Loop) GoInline(vm *goja.Runtime, ctx context.Context, work func(ctx context.Context) (any, error), settle func(vm *goja.Runtime, v any, err error) (goja.Value, error)) *goja.Promise {
	if l.driving == nil || l.owner != l.driving || l.driving.finished {
		return l.Go(vm, ctx, work, settle)
	}
	p, resolve, reject := vm.NewPromise()
	if ctx == nil {
		ctx = l.ctx
	}
	l.workers.Add(1)
	l.inline = append(l.inline, &inlineWork{ctx: ctx, work: work, settle: settle, resolve: resolve, reject: reject, owner: l.owner, p: p})
	return p
}

// inlineWork is host work and how to settle its promise.
type inlineWork struct {
	ctx             context.Context
	work            func(ctx context.Context) (any, error)
	settle          func(vm *goja.Runtime, v any, err error) (goja.Value, error)
	resolve, reject func(any) error
	owner           *run
	p               *goja.Promise // inline only: its promise
	completes       *run          // inline only: the Run that returned p
	v               any           // the outcome, once run inline
	err             error
}

// spawn runs w on a goroutine of its own, counted in workers already, and
// posts the outcome back to the loop.
func (l *Loop) spawn(w *inlineWork) {
	wctx, release := l.workContext(w.ctx)
	l.pending.Add(1)
	go func() {
		defer l.workers.Done()
		v, err := runWork(wctx, w.work)
		release()
		l.post(item{fn: func() {
			l.pending.Add(-1)
			l.settleGo(w.resolve, w.reject, w.settle, v, err)
		}, owner: w.owner})
	}()
}

func (l *Loop) workContext(ctx context.Context) (context.Context, func()) {
	if ctx == nil {
		return l.ctx, func() {}
	}
	wctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(l.ctx, cancel)
	return wctx, func() { stop(); cancel() }
}

func runWork(ctx context.Context, work func(ctx context.Context) (any, error)) (v any, err error) {
	defer func() {
		if x := recover(); x != nil {
			v, err = nil, &PanicError{Value: x, Stack: debug.Stack()}
		}
	}()
	return work(ctx)
}

func (l *Loop) settleGo(resolve, reject func(any) error, settle func(vm *goja.Runtime, v any, err error) (goja.Value, error), v any, err error) {
	vm := l.vm
	var (
		val  goja.Value
		serr error
	)
	switch {
	case settle != nil:
		if ex := vm.Try(func() { val, serr = settle(vm, v, err) }); ex != nil {
			serr = ex
		}
	case err != nil:
		serr = err
	default:
		val = vm.ToValue(v)
	}
	serr = l.convertKeep(serr)
	if l.stopped.Load() {
		return
	}
	if val == nil {
		val = goja.Undefined()
	}
	var rerr error
	if serr != nil {
		rerr = reject(l.rejectionValue(vm, serr))
	} else {
		rerr = resolve(val)
	}
	if rerr != nil {
		l.convert(rerr) // only uncatchable errors come back: an interrupt
	}
}

// convertKeep breaks the loop on an interrupt like convert, but keeps a
// thrown *goja.Exception as is, so that it can be rethrown as its value.
func (l *Loop) convertKeep(err error) error {
	if err == nil {
		return nil
	}
	if _, _, ex := gojaError(err); ex != nil {
		return err
	}
	return l.convert(err)
}

// Block runs f, Go work a host function does synchronously for script code
// and that may block (a synchronous host module function), so that the
// caller of a Run driving the loop is never stuck in it past the Run's
// deadline: on the loop goroutine, f runs in place, as it always did; while
// a caller drives the loop, f runs on a goroutine of its own and Block
// returns the stop reason as soon as the loop stops (the goroutine is left
// to finish, as a stuck loop goroutine would have been, and Close and
// Abandon wait for it). A panic in f is re-raised on the caller. Call it on
// the loop.
func (l *Loop) Block(f func() (any, error)) (any, error) {
	if !l.callerDriving.Load() {
		return f()
	}
	type outcome struct {
		v     any
		err   error
		panic any
	}
	ch := make(chan outcome, 1)
	l.workers.Add(1)
	go func() {
		defer l.workers.Done()
		var o outcome
		func() {
			defer func() {
				if x := recover(); x != nil {
					o = outcome{panic: x}
				}
			}()
			o.v, o.err = f()
		}()
		ch <- o
	}()
	select {
	case o := <-ch:
		if o.panic != nil {
			panic(o.panic)
		}
		return o.v, o.err
	case <-l.quit:
		return nil, l.Err()
	}
}
