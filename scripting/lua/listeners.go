package lua

import (
	"context"
	"errors"
	"fmt"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// on is dsh.on(event, listener, {prepend}) for the six events.
func (i *instance) on(L *glua.LState, agent *engine.Agent) int {
	event, _ := L.Get(1).(glua.LString)
	fn := L.Get(2)
	if !isFunction(fn) {
		i.throw(L, fmt.Errorf("on(%q, listener) needs a listener function", string(event)))
	}
	var opts []engine.ListenerOption
	if o, ok := L.Get(3).(*glua.LTable); ok && glua.LVAsBool(o.RawGetString("prepend")) {
		opts = append(opts, engine.Prepend())
	}
	key := i.key(fn)
	pl := i.pool
	d, err := hostapi.On(pl.plugin, pl.adapters(), i.replay, i.site(L), agent, string(event), key, opts...)
	if errors.Is(err, hostapi.ErrUnknownEvent) {
		hostapi.Unkey(i.callbacks, &i.seq, key, pl.unpin)
		i.throw(L, err)
	}
	if err != nil {
		i.forget(key)
		i.throw(L, err)
	}
	L.Push(i.disposer(L, d, key))
	return 1
}

// next makes a listener's next(): a Lua function that runs the rest of the
// Go chain and returns what it decided, converted by settle. The chain runs
// while the instance serves its queue, so listeners and bodies of this
// plugin further down run (nested) meanwhile.
func (i *instance) next(L *glua.LState, f *frame, work func() (any, error), settle func(v any) glua.LValue) *glua.LFunction {
	return L.NewFunction(func(L *glua.LState) int {
		if f.finished { // written by this goroutine only
			i.throw(L, errors.New("next() was called after its listener returned"))
		}
		v, err := i.await(work)
		if err != nil {
			i.throw(L, err)
		}
		L.Push(settle(v))
		return 1
	})
}

// errNoDecision is a listener that returned nothing.
func errNoDecision(event string) error {
	return hostapi.InvalidDecision(event, errors.New("it returned nil (return next() to pass the call on)"))
}

// preExecute is a tools/pre-execute listener in the script.
func (pl *pool) preExecute(key int) engine.PreExecuteFunc {
	spec := pl.listenerSpec("a tools/pre-execute listener")
	return func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		v, err := pl.invoke(key, ctx, spec, func(i *instance, L *glua.LState, f *frame) (any, error) {
			fn, _, err := i.callback(key, "")
			if err != nil {
				return nil, err
			}
			n := i.next(L, f, func() (any, error) { return next() }, func(v any) glua.LValue {
				return i.toLua(scripting.PreDecisionJSON(v.(engine.PreDecision)))
			})
			r, err := i.pcall(L, fn, i.execObject(L, f, exec, nil).ud, n)
			if err != nil {
				return nil, err
			}
			if r == glua.LNil {
				return nil, errNoDecision(hostapi.PreExecute)
			}
			g, err := i.conv.ToGo(r, "decision", decisionSchema)
			if err != nil {
				return nil, hostapi.InvalidDecision(hostapi.PreExecute, err)
			}
			return scripting.ReadPreDecision(g)
		})
		if err != nil {
			return engine.PreDecision{}, pl.policyFailure(ctx, spec.what, exec, err)
		}
		return v.(engine.PreDecision), nil
	}
}

// resultSchema makes empty content and additionalContexts tables arrays.
var resultSchema = dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties", Value: dsl.NewObject(
	dsl.Member{Key: "content", Value: arraySchema}, dsl.Member{Key: "additionalContexts", Value: arraySchema})})

// wrapper is a tools/execute wrapper in the script; it has no deadline of
// its own, as it encloses the body.
func (pl *pool) wrapper(key int) engine.ExecuteFunc {
	spec := callSpec{what: "a tools/execute wrapper", timeout: noTimeout}
	return func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
		v, err := pl.invoke(key, ctx, spec, func(i *instance, L *glua.LState, f *frame) (any, error) {
			fn, _, err := i.callback(key, "")
			if err != nil {
				return nil, err
			}
			n := i.next(L, f, func() (any, error) { return next(ctx), nil }, func(v any) glua.LValue {
				return i.resultLua(f, v.(*engine.Result))
			})
			r, err := i.pcall(L, fn, i.execObject(L, f, exec, nil).ud, n)
			if err != nil {
				return nil, err
			}
			if t, ok := r.(*glua.LTable); ok {
				if res, ok := i.results[t]; ok {
					return res, nil
				}
			}
			if r == glua.LNil {
				return nil, errors.New("tools/execute wrapper returned nil, not a result (return next() to pass the call on)")
			}
			g, err := i.conv.ToGo(r, "result", resultSchema)
			if err != nil {
				return nil, hostapi.InvalidResult(err)
			}
			return scripting.ReadResult(g)
		})
		if err != nil {
			return nil, pl.policyFailure(ctx, spec.what, exec, err)
		}
		return v.(*engine.Result), nil
	}
}

// postExecute is a tools/post-execute listener in the script.
func (pl *pool) postExecute(key int) engine.PostExecuteFunc {
	spec := pl.listenerSpec("a tools/post-execute listener")
	return func(ctx context.Context, exec *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		v, err := pl.invoke(key, ctx, spec, func(i *instance, L *glua.LState, f *frame) (any, error) {
			fn, _, err := i.callback(key, "")
			if err != nil {
				return nil, err
			}
			n := i.next(L, f, func() (any, error) { return next() }, func(v any) glua.LValue {
				return i.toLua(scripting.PostDecisionJSON(v.(engine.PostDecision)))
			})
			ret, err := i.pcall(L, fn, i.execObject(L, f, exec, nil).ud, i.toLua(r.JSON()), n)
			if err != nil {
				return nil, err
			}
			if ret == glua.LNil {
				return nil, errNoDecision(hostapi.PostExecute)
			}
			g, err := i.conv.ToGo(ret, "decision", decisionSchema)
			if err != nil {
				return nil, hostapi.InvalidDecision(hostapi.PostExecute, err)
			}
			return scripting.ReadPostDecision(g)
		})
		if err != nil {
			return engine.PostDecision{}, pl.policyFailure(ctx, spec.what, exec, err)
		}
		return v.(engine.PostDecision), nil
	}
}

// resultObserver is a tools/result observer in the script.
func (pl *pool) resultObserver(key int) engine.ResultContextObserver {
	spec := pl.listenerSpec("a tools/result observer")
	return func(ctx context.Context, exec *engine.Execution, r *engine.Result) error {
		_, err := pl.invoke(key, ctx, spec, func(i *instance, L *glua.LState, f *frame) (any, error) {
			fn, _, err := i.callback(key, "")
			if err != nil {
				return nil, err
			}
			_, err = i.pcall(L, fn, i.execObject(L, f, exec, nil).ud, i.toLua(r.JSON()))
			return nil, err
		})
		return err
	}
}

// changeObserver is a tools/change listener in the script.
func (pl *pool) changeObserver(key int) engine.ChangeObserver {
	spec := pl.listenerSpec("a tools/change listener")
	return func(c engine.Change) error {
		_, err := pl.invoke(key, context.Background(), spec, func(i *instance, L *glua.LState, _ *frame) (any, error) {
			fn, _, err := i.callback(key, "")
			if err != nil {
				return nil, err
			}
			_, err = i.pcall(L, fn, i.toLua(hostapi.ChangeJSON(c)))
			return nil, err
		})
		return err
	}
}

// dispatchLog is a tools/ptc-dispatch-log listener in the script.
func (pl *pool) dispatchLog(key int) engine.DispatchLogFunc {
	spec := pl.listenerSpec("a tools/ptc-dispatch-log listener")
	return func(ctx context.Context, e *engine.DispatchLogEntry, next func() ([]engine.Block, error)) ([]engine.Block, error) {
		v, err := pl.invoke(key, ctx, spec, func(i *instance, L *glua.LState, f *frame) (any, error) {
			fn, _, err := i.callback(key, "")
			if err != nil {
				return nil, err
			}
			entry := L.CreateTable(0, 6)
			if e.Exec != nil {
				entry.RawSetString("exec", i.execObject(L, f, e.Exec, nil).ud)
			}
			if e.Agent != nil {
				entry.RawSetString("agent", i.toLua(agentJSON(e.Agent)))
			}
			entry.RawSetString("subCallId", glua.LString(e.SubCallID))
			entry.RawSetString("name", glua.LString(e.Name))
			entry.RawSetString("isError", glua.LBool(e.IsError))
			entry.RawSetString("content", i.toLua(engine.ContentJSON(e.Content)))
			n := i.next(L, f, func() (any, error) { return next() }, func(v any) glua.LValue {
				return i.toLua(engine.ContentJSON(v.([]engine.Block)))
			})
			r, err := i.pcall(L, fn, entry, n)
			if err != nil {
				return nil, err
			}
			return i.content(r), nil
		})
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
