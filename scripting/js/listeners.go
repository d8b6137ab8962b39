package js

import (
	"context"
	"errors"
	"fmt"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/js/internal/jsvalue"
)

// on is on(event, listener, {prepend}) for the six events.
func (i *instance) on(vm *goja.Runtime, agent *engine.Agent, call goja.FunctionCall) goja.Value {
	event := call.Argument(0).String()
	fnv := call.Argument(1)
	if _, ok := goja.AssertFunction(fnv); !ok {
		throw(vm, fmt.Errorf("on(%q, listener) needs a listener function", event))
	}
	var opts []engine.ListenerOption
	if o, ok := call.Argument(2).(*goja.Object); ok {
		if p := o.Get("prepend"); p != nil && p.ToBoolean() {
			opts = append(opts, engine.Prepend())
		}
	}
	key := i.key(fnv.ToObject(vm))
	pl := i.pool
	d, err := hostapi.On(pl.plugin, pl.adapters(), i.replay, i.site(vm), agent, event, key, opts...)
	if errors.Is(err, hostapi.ErrUnknownEvent) {
		hostapi.Unkey(i.callbacks, &i.seq, key, pl.unpin)
		delete(i.caches.callables, key)
		throw(vm, err)
	}
	if err != nil {
		i.forget(key)
		throw(vm, err)
	}
	return i.effectDisposer(vm, d, key)
}

// goNext makes the script's next() in a tools/execute wrapper or a
// tools/ptc-dispatch-log listener: a function returning a promise that
// settles with what the rest of the Go chain decides. The chain runs off the
// loop, on a goroutine of its own, so listeners of the same plugin further
// down can run meanwhile. (Pre- and post-execute listeners get chainNext.)
func (i *instance) goNext(vm *goja.Runtime, ctx func() context.Context, work func(ctx context.Context) (any, error), settle func(vm *goja.Runtime, v any) (goja.Value, error)) goja.Value {
	return vm.ToValue(func(goja.FunctionCall) goja.Value {
		return vm.ToValue(i.loop.Go(vm, ctx(), work, func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
			if err != nil {
				return nil, err
			}
			return settle(vm, v)
		}))
	})
}

// plainSettled returns, for the plain allow and accept decisions (no field
// set), a promise already settled with the decision, made once per instance
// and frozen with its value: the end of a chain answers the same every time.
// It returns nil for any other decision.
func (i *instance) plainSettled(vm *goja.Runtime, v any) goja.Value {
	kind := plainKind(v)
	if kind == "" {
		return nil
	}
	if p := i.settled[kind]; p != nil {
		return p
	}
	d := i.plainDecision(vm, kind)
	if d == nil {
		return nil
	}
	p, resolve, _ := vm.NewPromise()
	_ = resolve(d.value)
	pv := vm.ToValue(p)
	if o, ok := pv.(*goja.Object); ok {
		if err := jsvalue.Freeze(vm, o); err != nil {
			return nil
		}
	}
	if i.settled == nil {
		i.settled = map[string]goja.Value{}
	}
	i.settled[kind] = pv
	return pv
}

// preExecute is a tools/pre-execute listener in the script.
func (pl *pool) preExecute(key int) engine.PreExecuteFunc {
	return func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		v, err := pl.invoke(key, ctx, "a tools/pre-execute listener", pl.host.listenerTimeout(), func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
			fn, obj, e, err := i.listenerCall(vm, st, key, ctx, exec, false)
			if err != nil {
				return nil, err
			}
			n := i.chainNext(vm, ctx, exec, false, func(context.Context) (any, error) {
				d, err := next()
				return boxPre(d), err
			})
			return fn(obj, e, n)
		}, func(i *instance, vm *goja.Runtime, v goja.Value) (any, error) {
			if p, ok := i.readPlain(vm, "allow", v); ok {
				return p.boxed, nil
			}
			g, err := i.toGo(vm, v, "decision")
			if err != nil {
				return nil, hostapi.InvalidDecision(hostapi.PreExecute, err)
			}
			return scripting.ReadPreDecision(g)
		})
		if err != nil {
			return engine.PreDecision{}, pl.policyFailure(ctx, "a tools/pre-execute listener", exec, err)
		}
		return v.(engine.PreDecision), nil
	}
}

// wrapper is a tools/execute wrapper in the script. exec.signal is writable:
// next() passes on the ctx the current signal stands for.
func (pl *pool) wrapper(key int) engine.ExecuteFunc {
	return func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
		v, err := pl.invoke(key, ctx, "a tools/execute wrapper", 0, func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
			fn, obj, e, err := i.listenerCall(vm, st, key, ctx, exec, true)
			if err != nil {
				return nil, err
			}
			live := i.live[e]
			n := i.goNext(vm, func() context.Context { return live.signalCtx(vm, i) }, func(c context.Context) (any, error) {
				return next(c), nil
			}, func(vm *goja.Runtime, v any) (goja.Value, error) {
				rv, err := i.resultJS(vm, v.(*engine.Result))
				if o, ok := rv.(*goja.Object); ok {
					st.release = append(st.release, func() { delete(i.results, o) })
				}
				return rv, err
			})
			return fn(obj, e, n)
		}, func(i *instance, vm *goja.Runtime, v goja.Value) (any, error) {
			if o, ok := v.(*goja.Object); ok {
				if r, ok := i.results[o]; ok {
					return r, nil
				}
			}
			g, err := i.toGo(vm, v, "result")
			if err != nil {
				return nil, hostapi.InvalidResult(err)
			}
			return scripting.ReadResult(g)
		})
		if err != nil {
			return nil, pl.policyFailure(ctx, "a tools/execute wrapper", exec, err)
		}
		return v.(*engine.Result), nil
	}
}

// postExecute is a tools/post-execute listener in the script.
func (pl *pool) postExecute(key int) engine.PostExecuteFunc {
	return func(ctx context.Context, exec *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		v, err := pl.invoke(key, ctx, "a tools/post-execute listener", pl.host.listenerTimeout(), func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
			fn, obj, e, err := i.listenerCall(vm, st, key, ctx, exec, false)
			if err != nil {
				return nil, err
			}
			rv, err := i.resultValue(vm, r)
			if err != nil {
				return nil, err
			}
			n := i.chainNext(vm, ctx, exec, true, func(context.Context) (any, error) {
				d, err := next()
				return boxPost(d), err
			})
			return fn(obj, e, rv, n)
		}, func(i *instance, vm *goja.Runtime, v goja.Value) (any, error) {
			if p, ok := i.readPlain(vm, "accept", v); ok {
				return p.boxed, nil
			}
			g, err := i.toGo(vm, v, "decision")
			if err != nil {
				return nil, hostapi.InvalidDecision(hostapi.PostExecute, err)
			}
			return scripting.ReadPostDecision(g)
		})
		if err != nil {
			return engine.PostDecision{}, pl.policyFailure(ctx, "a tools/post-execute listener", exec, err)
		}
		return v.(engine.PostDecision), nil
	}
}

// resultObserver is a tools/result observer in the script.
func (pl *pool) resultObserver(key int) engine.ResultContextObserver {
	return func(ctx context.Context, exec *engine.Execution, r *engine.Result) error {
		_, err := pl.invoke(key, ctx, "a tools/result observer", pl.host.listenerTimeout(), func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
			fn, obj, e, err := i.listenerCall(vm, st, key, ctx, exec, false)
			if err != nil {
				return nil, err
			}
			rv, err := i.resultValue(vm, r)
			if err != nil {
				return nil, err
			}
			return fn(obj, e, rv)
		}, func(*instance, *goja.Runtime, goja.Value) (any, error) { return nil, nil })
		return err
	}
}

// changeObserver is a tools/change listener in the script.
func (pl *pool) changeObserver(key int) engine.ChangeObserver {
	return func(c engine.Change) error {
		_, err := pl.invoke(key, context.Background(), "a tools/change listener", pl.host.listenerTimeout(), func(i *instance, vm *goja.Runtime, _ *callState) (goja.Value, error) {
			fn, obj, err := i.callable(key, "")
			if err != nil {
				return nil, err
			}
			v, err := i.toJS(vm, hostapi.ChangeJSON(c))
			if err != nil {
				return nil, err
			}
			return fn(obj, v)
		}, func(*instance, *goja.Runtime, goja.Value) (any, error) { return nil, nil })
		return err
	}
}

// dispatchLog is a tools/ptc-dispatch-log listener in the script.
func (pl *pool) dispatchLog(key int) engine.DispatchLogFunc {
	return func(ctx context.Context, e *engine.DispatchLogEntry, next func() ([]engine.Block, error)) ([]engine.Block, error) {
		v, err := pl.invoke(key, ctx, "a tools/ptc-dispatch-log listener", pl.host.listenerTimeout(), func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
			fn, obj, err := i.callable(key, "")
			if err != nil {
				return nil, err
			}
			entry := vm.NewObject()
			if e.Exec != nil {
				eo, err := i.execObject(vm, ctx, st, e.Exec, nil, false)
				if err != nil {
					return nil, err
				}
				_ = entry.Set("exec", eo)
			}
			if e.Agent != nil {
				_ = entry.Set("agent", i.agentObject(vm, e.Agent))
			}
			_ = entry.Set("subCallId", e.SubCallID)
			_ = entry.Set("name", e.Name)
			_ = entry.Set("isError", e.IsError)
			cv, err := i.toJS(vm, engine.ContentJSON(e.Content))
			if err != nil {
				return nil, err
			}
			_ = entry.Set("content", cv)
			n := i.goNext(vm, func() context.Context { return ctx }, func(context.Context) (any, error) {
				return next()
			}, func(vm *goja.Runtime, v any) (goja.Value, error) {
				return i.toJS(vm, engine.ContentJSON(v.([]engine.Block)))
			})
			return fn(obj, entry, n)
		}, convertContent)
		if err != nil {
			return nil, err
		}
		return v.([]engine.Block), nil
	}
}

// adapters are the pool's listener adapters, for hostapi.On.
func (pl *pool) adapters() hostapi.Adapters {
	return hostapi.Adapters{
		PreExecute: pl.preExecute, Execute: pl.wrapper, PostExecute: pl.postExecute,
		Result: pl.resultObserver, Change: pl.changeObserver, DispatchLog: pl.dispatchLog,
	}
}
