package js

import (
	"context"
	"errors"
	"fmt"
	"math"
	"weak"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
)

// liveExec is an execution object a script holds while its call runs.
type liveExec struct {
	exec        *engine.Execution
	ctx         context.Context // the call's ctx, as the script's signal stands for
	obj         *goja.Object
	signal      goja.Value // the call's own signal, once read
	replacement goja.Value // what a wrapper assigned to exec.signal, if anything
	nested      int        // tools.call counter
	st          *callState
	run         *engine.Run // bodies only
}

// execFns are the functions every execution object shares; they find their
// call through `this`, so no function is made per call.
type execFns struct {
	getSignal, setSignal, getArgs, deferContext, concludeTurn, progress, elicit goja.Value

	// The prototypes of execution objects: Object.prototype's children
	// with signal, read-only (listenerProto) or writable (wrapperProto),
	// and for bodies with deferContext, concludeTurn, progress and elicit
	// too.
	listenerProto, wrapperProto, bodyProto *goja.Object
}

// argsEntry is a listener's execution object's arguments: the snapshot, and
// its frozen conversion once read.
type argsEntry struct {
	snapshot any
	js       goja.Value
}

// lazyArgs remembers o's arguments, keyed weakly (entries of collected
// objects are swept as the map grows), for getArgs.
func (i *instance) lazyArgs(o *goja.Object, snapshot any) {
	if i.args == nil {
		i.args = map[weak.Pointer[goja.Object]]*argsEntry{}
	}
	hostapi.SetWeak(i.args, &i.argsSwept, o, &argsEntry{snapshot: snapshot})
}

func (i *instance) execFuncs(vm *goja.Runtime) *execFns {
	if i.fns != nil {
		return i.fns
	}
	this := func(call goja.FunctionCall) *liveExec {
		o, _ := call.This.(*goja.Object)
		l := i.liveExec(o)
		if l == nil {
			throw(vm, errors.New("this execution object is no longer live (its call has settled)"))
		}
		return l
	}
	i.fns = &execFns{
		getSignal: vm.ToValue(func(call goja.FunctionCall) goja.Value {
			l := this(call)
			return l.current(vm, i, l.st)
		}),
		setSignal: vm.ToValue(func(call goja.FunctionCall) goja.Value {
			l := this(call)
			l.current(vm, i, l.st) // the call's own signal exists before it can be replaced
			l.replacement = call.Argument(0)
			return goja.Undefined()
		}),
		getArgs: vm.ToValue(func(call goja.FunctionCall) goja.Value {
			o, _ := call.This.(*goja.Object)
			if o == nil {
				return goja.Undefined()
			}
			e := i.args[weak.Make(o)]
			if e == nil {
				return goja.Undefined()
			}
			if e.js == nil {
				v, err := i.argsJS(vm, e.snapshot)
				if err != nil {
					throw(vm, err)
				}
				e.js = v
			}
			return e.js
		}),
		deferContext: vm.ToValue(func(call goja.FunctionCall) goja.Value {
			l := this(call)
			m, err := i.messageFrom(vm, call.Argument(0))
			if err != nil {
				throw(vm, err)
			}
			if err := l.run.DeferContext(m); err != nil {
				throw(vm, err)
			}
			return goja.Undefined()
		}),
		concludeTurn: vm.ToValue(func(call goja.FunctionCall) goja.Value {
			this(call).run.ConcludeTurn()
			return goja.Undefined()
		}),
		progress: vm.ToValue(func(call goja.FunctionCall) goja.Value {
			p, err := progressArgs(call.Arguments)
			if err != nil {
				throw(vm, err)
			}
			o, _ := call.This.(*goja.Object)
			switch l := i.liveExec(o); {
			case l != nil && l.run != nil:
				engine.ReportProgress(l.ctx, p)
			case l == nil && o != nil && o.Prototype() == i.fns.bodyProto:
				// A body's object whose call settled reports nothing.
			default:
				throw(vm, errProgressThis)
			}
			return goja.Undefined()
		}),
		elicit: vm.ToValue(func(call goja.FunctionCall) goja.Value {
			return i.elicit(vm, call)
		}),
	}
	proto := func(setter goja.Value, methods bool) *goja.Object {
		p := vm.NewObject()
		_ = p.DefineAccessorProperty("signal", i.fns.getSignal, setter, goja.FLAG_FALSE, goja.FLAG_TRUE)
		// exec.caller, exec.agent and exec.parent of a call without one
		// (see execObject).
		for _, k := range [...]string{"caller", "agent", "parent"} {
			_ = p.DefineDataProperty(k, goja.Undefined(), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
		}
		if methods {
			_ = p.DefineDataProperty("deferContext", i.fns.deferContext, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
			_ = p.DefineDataProperty("concludeTurn", i.fns.concludeTurn, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
			_ = p.DefineDataProperty("progress", i.fns.progress, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
			_ = p.DefineDataProperty("elicit", i.fns.elicit, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
		}
		i.seal(p)
		return p
	}
	i.fns.listenerProto = proto(nil, false)
	i.fns.wrapperProto = proto(i.fns.setSignal, false)
	i.fns.bodyProto = proto(nil, true)
	return i.fns
}

// current returns the signal exec.signal reads: a replacement a wrapper set,
// or the call's own, made on first use.
func (l *liveExec) current(vm *goja.Runtime, i *instance, st *callState) goja.Value {
	if l.replacement != nil && !l.replacement.SameAs(l.signal) {
		return l.replacement
	}
	if l.signal == nil {
		_, l.signal = i.newController(vm, st, l.ctx)
	}
	return l.signal
}

// signalCtx returns the ctx the object's current signal stands for: the
// call's own, or one cancelled by a signal the script put there.
func (l *liveExec) signalCtx(vm *goja.Runtime, i *instance) context.Context {
	if l.replacement == nil || l.replacement.SameAs(l.signal) {
		return l.ctx
	}
	return i.ctxFromSignal(vm, l.ctx, l.replacement)
}

func (i *instance) liveExec(o *goja.Object) *liveExec {
	if o == nil {
		return nil
	}
	return i.live[o]
}

// execObject builds the execution object a script sees: callId, rootCallId,
// name, arguments (frozen), agent, parent (a token object, the same for the
// same token) and, for a call with a verified caller, caller (see
// callerObject) of its own, and, from its prototype, signal (writable in
// wrappers), an undefined caller and, for bodies, deferContext,
// concludeTurn, progress and elicit. It is registered as live until st's
// call settles (callState.done), without a closure of its own.
func (i *instance) execObject(vm *goja.Runtime, ctx context.Context, st *callState, exec *engine.Execution, run *engine.Run, writableSignal bool) (*goja.Object, error) {
	o := vm.NewObject()
	fns := i.execFuncs(vm)
	// define makes a read-only, enumerable own property (frozen below).
	define := func(k string, v goja.Value) {
		_ = o.DefineDataProperty(k, v, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	id := i.callIDValue(vm, exec.CallID())
	define("callId", id)
	if root := exec.RootCallID(); root != exec.CallID() {
		id = vm.ToValue(root)
	}
	define("rootCallId", id)
	define("name", i.nameValue(vm, exec.Name()))
	if run != nil {
		// A body's exec.arguments is its args, converted already.
		args, err := i.argsJS(vm, exec.Arguments())
		if err != nil {
			return nil, err
		}
		define("arguments", args)
	} else {
		// A listener's are converted on first read (a pass-through policy
		// never reads them), and stay readable after its call settled.
		i.lazyArgs(o, exec.Arguments())
		_ = o.DefineAccessorProperty("arguments", fns.getArgs, nil, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	// exec.agent and exec.parent of a call without an agent or a parent
	// are the prototypes' own undefined ones, as exec.caller below: two
	// read-only properties fewer to define on every execution object.
	if a := exec.Agent(); a != nil {
		define("agent", i.agentObject(vm, a))
	}
	if t := exec.Parent(); t != nil {
		define("parent", i.tokenObject(vm, t))
	}
	// exec.caller is the verified identity the call runs for (a served
	// request's token). Without one it is the prototypes' own undefined
	// caller (read-only, so nothing further up the chain, such as an
	// Object.prototype.caller a script set, can stand in for it): a call
	// without a caller allocates nothing for it.
	if c := engine.CallerFrom(ctx); c != nil {
		v, err := i.callerObject(vm, c)
		if err != nil {
			return nil, fmt.Errorf("exec.caller: %w", err)
		}
		define("caller", v)
	}
	// The signal is made on first read: most calls never look at it, and an
	// AbortController costs more than the rest of the object. One made after
	// the call was cancelled starts aborted.
	var live *liveExec
	if st.used.live {
		live = new(liveExec)
	} else {
		st.used.live, live = true, &st.firstLive
	}
	*live = liveExec{exec: exec, ctx: ctx, obj: o, st: st, run: run}
	// signal (an accessor) and a body's deferContext and concludeTurn are
	// the same for every execution object: they live on a frozen prototype
	// made once per instance, and find their call through this.
	switch {
	case run != nil:
		_ = o.SetPrototype(fns.bodyProto)
	case writableSignal:
		_ = o.SetPrototype(fns.wrapperProto)
	default:
		_ = o.SetPrototype(fns.listenerProto)
	}
	i.seal(o)
	if i.live == nil {
		i.live = map[*goja.Object]*liveExec{}
	}
	i.live[o] = live
	st.lives = append(st.lives, o)
	return o, nil
}

// tokenObject is the opaque frozen object standing for an execution token:
// the same object every time the same token reaches the instance.
// The objects are forgotten with their tokens (see hostapi.Tokens).
func (i *instance) tokenObject(vm *goja.Runtime, t *engine.Token) *goja.Object {
	return i.tokens.Get(t, func() *goja.Object {
		o := vm.NewObject()
		i.seal(o)
		return o
	})
}

// messageFrom reads a context message a script defers: {content, source?}
// or a whole message {id, role: "user", content, source}.
func (i *instance) messageFrom(vm *goja.Runtime, v goja.Value) (engine.Message, error) {
	g, err := i.toGo(vm, v, "message")
	if err != nil {
		return engine.Message{}, err
	}
	o, ok := g.(*dsl.Object)
	if !ok {
		return engine.Message{}, errors.New("deferContext(message) needs a message object")
	}
	return hostapi.DeferredMessage(o, i.pool.src.Rel)
}

// resultJS converts a result for a script, remembering which engine result
// the object stands for so a wrapper returning it hands back the same result.
func (i *instance) resultJS(vm *goja.Runtime, r *engine.Result) (goja.Value, error) {
	v, err := i.toJS(vm, r.JSON())
	if err != nil {
		return nil, err
	}
	if o, ok := v.(*goja.Object); ok {
		if i.results == nil {
			i.results = map[*goja.Object]*engine.Result{}
		}
		i.results[o] = r
	}
	return v, nil
}

// seal makes o non-extensible with the intrinsic captured at setup, so a
// script that replaced Object.preventExtensions changes nothing.
func (i *instance) seal(o *goja.Object) {
	if i.realm != nil {
		_ = i.realm.PreventExtensions(o)
	}
}

// listenerCall looks up the listener function stored at key and builds the
// execution object it is called with, released when the call settles.
func (i *instance) listenerCall(vm *goja.Runtime, st *callState, key int, ctx context.Context, exec *engine.Execution, writableSignal bool) (goja.Callable, *goja.Object, *goja.Object, error) {
	fn, obj, err := i.callable(key, "")
	if err != nil {
		return nil, nil, nil, err
	}
	e, err := i.execObject(vm, ctx, st, exec, nil, writableSignal)
	if err != nil {
		return nil, nil, nil, err
	}
	return fn, obj, e, nil
}

// argsJS converts a call's arguments, reusing the last conversion when the
// same snapshot comes again (the body, then its renderer): the JS object is
// frozen and the snapshot never changes, so sharing it is safe.
func (i *instance) argsJS(vm *goja.Runtime, args any) (goja.Value, error) {
	o, ok := args.(*dsl.Object)
	if ok && o == i.lastArgs && i.lastArgsJS != nil {
		return i.lastArgsJS, nil
	}
	v, err := i.toJS(vm, args)
	if err == nil && ok {
		i.lastArgs, i.lastArgsJS = o, v
	}
	return v, err
}

// The errors of exec.progress's arguments, and of calling it on something
// other than a body's execution object.
var (
	errProgress        = errors.New("exec.progress(progress, total?, message?): progress must be a finite number")
	errProgressTotal   = errors.New("exec.progress(progress, total?, message?): total must be a finite number >= 0")
	errProgressMessage = errors.New("exec.progress(progress, total?, message?): message must be a string")
	errProgressThis    = errors.New("exec.progress(progress, total?, message?): this is not a tool body's execution object")
)

// progressArgs reads exec.progress(progress, total?, message?): progress a
// finite number, total a finite number >= 0 (0, the default, is unknown)
// and message a string, both undefined when absent.
func progressArgs(args []goja.Value) (engine.Progress, error) {
	arg := func(k int) goja.Value {
		if k < len(args) {
			return args[k]
		}
		return goja.Undefined()
	}
	var p engine.Progress
	var ok bool
	if p.Progress, ok = finiteNumber(arg(0)); !ok {
		return p, errProgress
	}
	if t := arg(1); !goja.IsUndefined(t) {
		if p.Total, ok = finiteNumber(t); !ok || p.Total < 0 {
			return p, errProgressTotal
		}
	}
	if m := arg(2); !goja.IsUndefined(m) {
		if !goja.IsString(m) {
			return p, errProgressMessage
		}
		// Only what a report carries is read (engine.MaxProgressMessage).
		p.Message = eventloop.CutText(m, engine.MaxProgressMessage)
	}
	return p, nil
}

// finiteNumber is v as a float64 when it is a finite number (not a Number
// object, a numeric string or a BigInt).
func finiteNumber(v goja.Value) (float64, bool) {
	if !goja.IsNumber(v) {
		return 0, false
	}
	f := v.ToFloat()
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
