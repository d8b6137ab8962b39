package js

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"weak"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/internal/hostpool"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
	"github.com/dsh-go/dsh/scripting/js/internal/jsvalue"
	"github.com/dsh-go/dsh/scripting/js/internal/tsbuild"
)

// limits bound every value converted at the boundary: zero fields take
// dsl's defaults (dsl.DefaultMaxDepth …), the same as the Lua host's.
var limits = jsvalue.Limits{}

// callState is what one script call shares between its job and its
// cancellation hook, both on the loop.
type callState struct {
	inst        *instance
	body        bool
	controllers []*goja.Object  // signals to abort when the call is cancelled
	release     []func()        // run when the call settles
	caller      context.Context // the caller's ctx: signals made later start aborted when it is done
	cancel      context.CancelCauseFunc
	rendering   atomic.Pointer[renderTimeout] // a body's prerender under way (see prerender)
	began       atomic.Bool                   // the script started
	stopCaller  func() bool                   // see watchCaller
	// The execution objects registered as live for the call (see
	// execObject), unregistered when it settles; livesBuf holds the first
	// (most calls have one: the body's, or the listener's).
	lives    []*goja.Object
	livesBuf [1]*goja.Object
	// The first execution object's liveExec and a body's prerender,
	// allocated with the state (see execObject and prerender); used
	// records which of them are taken.
	firstLive liveExec
	prerender prerendering
	used      struct{ live, prerender bool }
}

// renderTimeout is the deadline of a body's prerender (see prerender), what
// it made so far, and whether it got to presentationMeta.
type renderTimeout struct {
	render, meta *hostapi.TimedOut                // the deadline's error for each
	cur          atomic.Pointer[hostapi.TimedOut] // the one running
	pre          *engine.Prerendered
}

func (st *callState) done() {
	for _, o := range st.lives {
		delete(st.inst.live, o)
	}
	st.lives = nil
	for _, f := range st.release {
		f()
	}
	st.release = nil
}

// invoke runs a script callback of the plugin on its current instance.
// what names the callback in errors; run calls the script on the loop and
// convert turns its settled value into Go there.
//
// A tool body (timeout 0 and body set) runs under the caller's ctx: when it
// is cancelled the script's signal aborts and, after the grace period, the
// script is interrupted if it runs on, or, if it waits, awaited while the
// call's caller waits for it and left behind past its deadline or once the
// caller gave up (see eventloop's Deadlines). Every other callback
// (listeners, guards, renderers…) runs to completion whatever the caller
// does, as the pipeline awaits a slow listener: the caller's cancellation
// only aborts the script's signal, and the callback's own deadline
// (timeout, from when the script starts) ends it the same way.
func (pl *pool) invoke(key int, ctx context.Context, what string, timeout time.Duration,
	run func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error),
	convert func(i *instance, vm *goja.Runtime, v goja.Value) (any, error)) (any, error) {
	return pl.invokeMode(key, ctx, nil, what, timeout, false, run, convert)
}

// invokeBody is invoke for tool bodies; giveUp is the ctx of the call's
// caller (engine.Run.Caller): past the grace after ctx's abort, a script
// that waits is awaited only while giveUp is live (eventloop.RunForCaller).
func (pl *pool) invokeBody(key int, ctx, giveUp context.Context, what string,
	run func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error),
	convert func(i *instance, vm *goja.Runtime, v goja.Value) (any, error)) (any, error) {
	return pl.invokeMode(key, ctx, giveUp, what, 0, true, run, convert)
}

func (pl *pool) invokeMode(key int, caller, giveUp context.Context, what string, timeout time.Duration, body bool,
	run func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error),
	convert func(i *instance, vm *goja.Runtime, v goja.Value) (any, error)) (any, error) {
	if !pl.plugin.Acquire() {
		return nil, scripting.ErrDisposed
	}
	defer pl.plugin.Release()
	base := caller
	if !body {
		base = context.WithoutCancel(caller)
	}
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	// A call that never started because its instance broke meanwhile (a
	// call before it was stuck in Go code and interrupted) goes to a fresh
	// instance.
	for attempt := 1; ; attempt++ {
		v, started, err := pl.runOnce(ctx, caller, giveUp, cancel, key, what, timeout, body, run, convert)
		if started || ctx.Err() != nil || !errors.Is(err, eventloop.ErrInterrupted) && !errors.Is(err, eventloop.ErrClosed) {
			return v, stopped(err)
		}
		if attempt == 3 {
			return nil, fmt.Errorf("%s: the plugin's JavaScript instance was interrupted before the call started", what)
		}
	}
}

// runOnce is one attempt of invokeMode, on the instance the pool gives;
// started reports whether the script began.
func (pl *pool) runOnce(ctx, caller, giveUp context.Context, cancel context.CancelCauseFunc,
	key int, what string, timeout time.Duration, body bool,
	run func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error),
	convert func(i *instance, vm *goja.Runtime, v goja.Value) (any, error)) (_ any, started bool, _ error) {
	inst, release, err := pl.instances.Get(ctx, key)
	if err != nil {
		return nil, false, err
	}
	defer release()
	st := &callState{inst: inst, caller: caller, cancel: cancel, body: body}
	st.lives = st.livesBuf[:0]
	defer st.unwatchCaller()
	job := func(vm *goja.Runtime) (goja.Value, error) {
		st.began.Store(true)
		return run(inst, vm, st)
	}
	done := func(vm *goja.Runtime, v goja.Value, err error) (any, error) {
		defer st.done()
		if err != nil {
			return nil, inst.thrown(vm, err)
		}
		return convert(inst, vm, v)
	}
	var v any
	if body {
		// A body's ctx is its caller's: its end cancels the script.
		v, err = inst.loop.RunForCaller(ctx, giveUp, job, st.abortSignals, done)
	} else {
		// The deadline (if any) counts from when the script starts; ctx
		// ends only through it, or once the call is over.
		var expire func()
		if timeout > 0 {
			expire = func() { cancel(&hostapi.TimedOut{What: what, D: timeout}) }
		}
		v, err = inst.loop.RunWithin(ctx, timeout, expire, job, st.abortSignals, done)
	}
	if err == nil {
		return v, st.began.Load(), nil
	}
	if mle, ok := memoryLimit(err); ok {
		return nil, st.began.Load(), mle
	}
	if errors.Is(err, eventloop.ErrInterrupted) {
		var to *hostapi.TimedOut
		if cause := context.Cause(ctx); errors.As(cause, &to) {
			return nil, st.began.Load(), to
		}
	}
	return v, st.began.Load(), err
}

// stopped is the error a call fails with when its instance's loop stopped
// it: it ran on past its grace after its signal aborted (its deadline, its
// caller's cancellation), its interpreter was interrupted or broken for
// another call, or the plugin was closed meanwhile. The loop's own messages
// ("eventloop: script interrupted"…) are the host's business, logged when
// the loop breaks; the call fails as aborted (engine.ErrAborted), which the
// timeout policy reports as its timeout when its deadline caused it. Other
// errors are returned as they are.
func stopped(err error) error {
	if errors.Is(err, eventloop.ErrInterrupted) || errors.Is(err, eventloop.ErrBroken) || errors.Is(err, eventloop.ErrClosed) {
		return engine.ErrAborted()
	}
	return err
}

// abortSignals aborts the signals the call's script made (on the loop).
func (st *callState) abortSignals(vm *goja.Runtime) {
	for _, c := range st.controllers {
		st.inst.abortController(vm, c, "the call was cancelled")
	}
}

// watchCaller makes the caller's cancellation abort the signals of a call
// that is not a body (a body's is its ctx, which Run watches); it is set up
// with the call's first signal, as a call that made none has nothing to
// abort. Called on the loop.
func (st *callState) watchCaller() {
	if st.body || st.stopCaller != nil || st.caller == nil || st.caller.Done() == nil {
		return
	}
	inst := st.inst
	st.stopCaller = context.AfterFunc(st.caller, func() {
		_, _ = inst.loop.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) {
			st.abortSignals(vm)
			return goja.Undefined(), nil
		}, nil, nil)
	})
}

// unwatchCaller stops watchCaller's watch once the call returned. The
// loop set stopCaller before the call settled, and the call's result
// reached this goroutine through the loop's channel since.
func (st *callState) unwatchCaller() {
	if st.stopCaller != nil {
		st.stopCaller()
	}
}

// thrown converts a script's exception into a Go error: a coded error keeps
// its name and code, so the failure's info carries them. A script error
// comes back as a *hostapi.Raised that says where it was raised (the first
// frame in the plugin's code, at its original position), and whether the
// interpreter raised it: an uncoded error of one of the language's own types
// (TypeError, ReferenceError…), which the diagnostics also name. A policy's
// failure that came back through the script (see rethrow) is itself again.
func (i *instance) thrown(vm *goja.Runtime, err error) error {
	var je *eventloop.JSError
	if !errors.As(err, &je) {
		return err
	}
	if pe, ok := je.Value.(*hostapi.PolicyError); ok {
		return pe
	}
	if je.Stack != "" {
		i.pool.log.Debug("script error", "error", je.Error(), "stack", tsbuild.MapStack(je.Stack, i.outputs...))
	}
	r := &hostapi.Raised{}
	if code := thrownCode(je); code != "" && je.Name != "" {
		r.Err = engine.NewError(je.Name, code, je.Message)
	} else {
		r.Err = errors.New(je.Message)
		if languageError(je.Name) {
			r.Fault, r.Text = true, je.Name+": "+je.Message
		}
	}
	r.File, r.Line, r.Col = i.scriptPosition(je.Stack)
	return r
}

// languageError reports whether name is one of the language's own error
// types, which the interpreter raises.
func languageError(name string) bool {
	switch name {
	case "TypeError", "ReferenceError", "SyntaxError", "RangeError", "EvalError", "URIError":
		return true
	}
	return false
}

// scriptPosition returns the first frame of a JSError stack that is in one
// of the plugin's modules, at its original position (TypeScript and ES
// modules through their source maps), or "" and zeros.
func (i *instance) scriptPosition(stack string) (file string, line, col int) {
	for _, ln := range strings.Split(stack, "\n") {
		f, l, c := stackPosition(ln)
		if f == "" {
			continue
		}
		for _, out := range i.outputs {
			if out == nil || out.Path != f {
				continue
			}
			if l == 1 {
				c -= len(moduleHead)
			}
			if _, ol, oc, ok := out.Original(l, c); ok {
				return f, ol, oc
			}
			return f, l, c
		}
	}
	return "", 0, 0
}

// rethrow is the script error next() rejects with when the rest of a chain
// failed with err: a policy's failure stays itself when it comes back
// through this listener (see thrown), so it is reported once, where it was
// raised, and keeps its info. Other errors reject as a plain Error.
func (i *instance) rethrow(vm *goja.Runtime, err error) error {
	var pe *hostapi.PolicyError
	if !errors.As(err, &pe) {
		return err
	}
	ex := vm.Try(func() { throw(vm, err) })
	if ex == nil {
		return err
	}
	if o, ok := ex.Value().(*goja.Object); ok {
		hostapi.SetWeak(i.rethrown, &i.rethrownSwept, o, pe)
	}
	return ex
}

// thrownValue is the loop's ThrownValue: an object rethrow made is the
// policy's failure it stands for.
func (i *instance) thrownValue(vm *goja.Runtime, v goja.Value) (any, bool) {
	if o, ok := v.(*goja.Object); ok {
		if pe := i.rethrown[weak.Make(o)]; pe != nil {
			return pe, true
		}
	}
	return thrownValue(vm, v)
}

// policyFailure is the error of a policy of the plugin (a listener, a
// wrapper, a guard) whose call for exec failed with err: see
// hostapi.PolicyFailure.
func (pl *pool) policyFailure(ctx context.Context, what string, exec *engine.Execution, err error) error {
	return hostapi.PolicyFailure(ctx, pl.log, pl.src.Rel, what, exec, err)
}

// key records a callback object under the next effect key (see hostapi.Key).
func (i *instance) key(cb *goja.Object) int {
	return hostapi.Key(i.callbacks, &i.seq, i.topDone, func() int { return i.pool.pin(i) }, cb)
}

// callback returns the function property name of the object stored at key.
func (i *instance) callback(key int, name string) (goja.Callable, *goja.Object, error) {
	obj := i.callbacks[key]
	if obj == nil {
		return nil, nil, hostpool.ErrGone
	}
	if name == "" {
		fn, ok := goja.AssertFunction(obj)
		if !ok {
			return nil, nil, errors.New("the script callback is not a function")
		}
		return fn, obj, nil
	}
	fn, ok := goja.AssertFunction(obj.Get(name))
	if !ok {
		return nil, nil, fmt.Errorf("%s is not a function", name)
	}
	return fn, obj, nil
}

// toJS converts a Go value for the script; values the engine hands over are
// lossless, so a failure is a bug reported as an error.
func toJS(vm *goja.Runtime, v any) (goja.Value, error) {
	if _, undef := v.(dsl.Undefined); undef {
		return goja.Undefined(), nil
	}
	return jsvalue.ToJS(vm, v)
}

// toGo converts a script's value at the boundary.
func toGo(vm *goja.Runtime, v goja.Value, root string) (any, error) {
	return jsvalue.ToGo(vm, v, root, limits)
}

// realmFor returns vm's Realm: i's own when vm is i's runtime, without the
// lookup jsvalue.RealmOf makes (a weak pointer and a map, about a third of
// a microsecond a call), else the one jsvalue attached to vm.
func (i *instance) realmFor(vm *goja.Runtime) (*jsvalue.Realm, bool) {
	if i != nil && i.realm != nil && i.realm.Runtime() == vm {
		return i.realm, true
	}
	return jsvalue.RealmOf(vm)
}

// toJS is the package's toJS through i's realm.
func (i *instance) toJS(vm *goja.Runtime, v any) (goja.Value, error) {
	if _, undef := v.(dsl.Undefined); undef {
		return goja.Undefined(), nil
	}
	if r, ok := i.realmFor(vm); ok {
		return r.ToJS(v)
	}
	return jsvalue.ToJS(vm, v)
}

// toGo is the package's toGo through i's realm.
func (i *instance) toGo(vm *goja.Runtime, v goja.Value, root string) (any, error) {
	if r, ok := i.realmFor(vm); ok {
		return r.ToGo(v, root, limits)
	}
	return jsvalue.ToGo(vm, v, root, limits)
}

// newController makes an AbortController whose signal the call's
// cancellation aborts.
func (i *instance) newController(vm *goja.Runtime, st *callState, ctx context.Context) (*goja.Object, goja.Value) {
	newc, _ := goja.AssertFunction(i.abort.Get("newController"))
	c, _ := newc(goja.Undefined())
	co := c.ToObject(vm)
	if st != nil && st.caller != nil && st.caller.Err() != nil || ctx != nil && ctx.Err() != nil {
		i.abortController(vm, co, "the call was cancelled")
	} else if st != nil {
		st.controllers = append(st.controllers, co)
		st.watchCaller()
	}
	return co, co.Get("signal")
}

func (i *instance) abortController(vm *goja.Runtime, c *goja.Object, msg string) {
	abort, _ := goja.AssertFunction(i.abort.Get("abort"))
	_, _ = abort(goja.Undefined(), c, vm.ToValue(msg))
}

// ctxFromSignal returns a ctx cancelled when a script's AbortSignal aborts.
// Called on the loop.
func (i *instance) ctxFromSignal(vm *goja.Runtime, parent context.Context, signal goja.Value) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	onAbort, _ := goja.AssertFunction(i.abort.Get("onAbort"))
	fire := vm.ToValue(func(goja.FunctionCall) goja.Value {
		cancel(errors.New("aborted by the wrapper's signal"))
		return goja.Undefined()
	})
	if _, err := onAbort(goja.Undefined(), signal, fire); err != nil {
		cancel(err)
	}
	return ctx
}

// callID formats a nested call id.
func callID(parent string, n int) string { return parent + ":call:" + strconv.Itoa(n) }

// thrownCode is the code of a thrown coded error ({name, code, message}).
func thrownCode(je *eventloop.JSError) string {
	if o, ok := je.Value.(*dsl.Object); ok {
		if c, ok := o.Get("code"); ok {
			if s, ok := c.(string); ok {
				return s
			}
		}
	}
	return ""
}

// thrownValue gives JSError.Value for a thrown object: its own name, code
// and message, read only when they are own properties, each cut to
// hostapi.MaxErrorText bytes.
func thrownValue(vm *goja.Runtime, v goja.Value) (any, bool) {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil, false
	}
	out := dsl.NewObject()
	for _, k := range o.GetOwnPropertyNames() {
		if k != "code" && k != "name" && k != "message" {
			continue
		}
		if s := o.Get(k); s != nil && goja.IsString(s) {
			out.Set(k, eventloop.CutText(s, hostapi.MaxErrorText))
		}
	}
	return out, true
}
