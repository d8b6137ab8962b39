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
	wctx, release := l.workContext(ctx)
	owner := l.owner
	l.workers.Add(1)
	go func() {
		defer l.workers.Done()
		v, err := runWork(wctx, work)
		release()
		l.post(item{fn: func() { l.settleGo(resolve, reject, settle, v, err) }, owner: owner})
	}()
	return p
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
