package lua

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// bindDefinition fills def's callbacks with calls into the plugin: each one
// looks its script function up by key on whichever instance serves the call.
func (i *instance) bindDefinition(def *engine.Definition, key int, d *defined) {
	pl := i.pool
	name := def.Name
	schema := def.Output.Schema
	body := callSpec{what: toolWhat(name, ""), body: true}
	render := pl.listenerSpec(toolWhat(name, "output.render"))
	meta := pl.listenerSpec(toolWhat(name, "output.presentationMeta"))
	// The body renders its value in the same trip into the instance
	// (engine.Prerendered) when it can check it against the output schema.
	out, _ := dsl.Compile(schema)
	if d != nil {
		def.ValidateArgs = d.params.ValidateArgs
	}
	def.Execute = func(ctx context.Context, args any, run *engine.Run) (any, error) {
		if d != nil {
			if vs := d.params.ValidateArgs(args); vs != nil {
				return nil, &engine.ArgsError{Violations: vs}
			}
		}
		// What the trip rendered so far, published whole at each step: a
		// render cut by its deadline is then reported as if called apart.
		var done atomic.Pointer[engine.Prerendered]
		spec := body
		spec.giveUp = run.Caller()
		v, err := pl.invoke(key, ctx, spec, func(i *instance, L *glua.LState, f *frame) (any, error) {
			fn, _, err := i.callback(key, "execute")
			if err != nil {
				return nil, err
			}
			l := i.execObject(L, f, run.Execution, run)
			a := i.arguments(l)
			v, err := i.pcall(L, fn, a, l.ud)
			if err != nil {
				return nil, err
			}
			g, err := i.conv.ToGo(v, "value", schema)
			if err != nil {
				return hostapi.BodyValue(pl.log, name, err), nil
			}
			if out == nil || !out.Valid(g) {
				return g, nil
			}
			return i.prerender(key, &done, render, meta, def.Output.PresentationMeta != nil, args, g)
		})
		var to *hostapi.TimedOut
		if pre := done.Load(); err != nil && pre != nil && errors.As(err, &to) {
			switch to.What {
			case render.what:
				return &engine.Prerendered{Value: pre.Value, Err: to}, nil
			case meta.what:
				return &engine.Prerendered{Value: pre.Value, Content: pre.Content, HasMeta: true, MetaErr: to}, nil
			}
		}
		return v, err
	}
	def.Output.Render = func(args, value any) ([]engine.Block, error) {
		v, err := pl.invoke(key, context.Background(), render, func(i *instance, L *glua.LState, _ *frame) (any, error) {
			return i.callRender(L, key, args, value)
		})
		if err != nil {
			return nil, err
		}
		return v.([]engine.Block), nil
	}
	if out, _ := i.callbacks[key].(*glua.LTable).RawGetString("output").(*glua.LTable); out != nil && isFunction(out.RawGetString("presentation_meta")) {
		def.Output.PresentationMeta = func(args, value any) (any, error) {
			return pl.invoke(key, context.Background(), meta, func(i *instance, L *glua.LState, _ *frame) (any, error) {
				return i.callMeta(L, key, args, value)
			})
		}
	}
	has := func(field string) bool {
		return isFunction(i.callbacks[key].(*glua.LTable).RawGetString(field))
	}
	valid := func(args any) bool { return d == nil || d.params.Valid(args) }
	if has("is_concurrency_safe") {
		spec := pl.listenerSpec(toolWhat(name, "is_concurrency_safe"))
		def.IsConcurrencySafe = func(args any) bool {
			if !valid(args) {
				return false
			}
			v, err := pl.invoke(key, context.Background(), spec, func(i *instance, L *glua.LState, _ *frame) (any, error) {
				r, err := i.method(L, key, "is_concurrency_safe", args)
				return r == glua.LTrue, err
			})
			return err == nil && v == true
		}
	}
	if has("present_call") {
		spec := pl.listenerSpec(toolWhat(name, "present_call"))
		def.PresentCall = func(args any) *engine.CallView {
			if !valid(args) {
				return nil
			}
			v, err := pl.invoke(key, context.Background(), spec, func(i *instance, L *glua.LState, _ *frame) (any, error) {
				r, err := i.method(L, key, "present_call", args)
				if err != nil || r == glua.LNil {
					return (*engine.CallView)(nil), err
				}
				g, err := i.conv.ToGo(r, "view", nil)
				if err != nil {
					return nil, err
				}
				return engine.CallViewFromJSON(g)
			})
			return hostapi.View[engine.CallView](pl.log, name, "present_call", v, err)
		}
	}
	if has("present_result") {
		spec := pl.listenerSpec(toolWhat(name, "present_result"))
		def.PresentResult = func(args any, r engine.ResultSummary) *engine.ResultView {
			if !valid(args) {
				return nil
			}
			summary := hostapi.SummaryJSON(r)
			v, err := pl.invoke(key, context.Background(), spec, func(i *instance, L *glua.LState, _ *frame) (any, error) {
				r, err := i.method(L, key, "present_result", args, summary)
				if err != nil || r == glua.LNil {
					return (*engine.ResultView)(nil), err
				}
				g, err := i.conv.ToGo(r, "view", nil)
				if err != nil {
					return nil, err
				}
				return engine.ResultViewFromJSON(g)
			})
			return hostapi.View[engine.ResultView](pl.log, name, "present_result", v, err)
		}
	}
	for _, field := range []string{"finalize_content", "project_content"} {
		if !has(field) {
			continue
		}
		spec := pl.listenerSpec(toolWhat(name, field))
		fin := func(exec *engine.Execution, r *engine.Result) ([]engine.Block, error) {
			v, err := pl.invoke(key, context.Background(), spec, func(i *instance, L *glua.LState, f *frame) (any, error) {
				fn, _, err := i.callback(key, field)
				if err != nil {
					return nil, err
				}
				l := i.execObject(L, f, exec, nil)
				ret, err := i.pcall(L, fn, l.ud, i.toLua(r.JSON()))
				if err != nil {
					return nil, err
				}
				if ret == glua.LNil {
					return []engine.Block(nil), nil
				}
				return i.content(ret), nil
			})
			if err != nil {
				return nil, err
			}
			return v.([]engine.Block), nil
		}
		if field == "finalize_content" {
			def.FinalizeContent = fin
		} else {
			def.ProjectContent = fin
		}
	}
}

// callRender calls the definition's output.render: its blocks, content the
// pipeline reports as non-lossless, or the script's error.
func (i *instance) callRender(L *glua.LState, key int, args, value any) (any, error) {
	fn, err := i.outputFn(key, "render")
	if err != nil {
		return nil, err
	}
	r, err := i.pcall(L, fn, i.toLua(args), i.toLua(value))
	if err != nil {
		return nil, err
	}
	return i.content(r), nil
}

// callMeta calls the definition's output.presentation_meta.
func (i *instance) callMeta(L *glua.LState, key int, args, value any) (any, error) {
	fn, err := i.outputFn(key, "presentation_meta")
	if err != nil {
		return nil, err
	}
	r, err := i.pcall(L, fn, i.toLua(args), i.toLua(value))
	if err != nil {
		return nil, err
	}
	g, err := i.conv.ToGo(r, "meta", nil)
	if err != nil {
		return nonLossless{}, nil // reported as non-lossless metadata
	}
	return g, nil
}

// prerender renders a body's valid value in the body's trip, each callback
// (render, then presentation_meta if the tool has one) under its own
// listener deadline as when called apart: the engine then takes the outcome
// (engine.Prerendered) instead of asking for it in more trips. A callback
// that fails is its failure; one cut by its deadline ends the body's run,
// and Execute reports the cut from what done holds.
func (i *instance) prerender(key int, done *atomic.Pointer[engine.Prerendered], render, meta callSpec, hasMeta bool, args, value any) (any, error) {
	pre := &engine.Prerendered{Value: value}
	done.Store(pre)
	blocks, err := i.runNested(render, func(i *instance, L *glua.LState, _ *frame) (any, error) {
		return i.callRender(L, key, args, value)
	})
	if i.broken() {
		return nil, err
	}
	if err != nil {
		return &engine.Prerendered{Value: value, Err: err}, nil // the pipeline stops at a failed render
	}
	pre = &engine.Prerendered{Value: value, Content: blocks.([]engine.Block)}
	done.Store(pre)
	if !hasMeta || !engine.LosslessContent(pre.Content) {
		return pre, nil // no meta, or the pipeline stops at content that is not lossless
	}
	m, err := i.runNested(meta, func(i *instance, L *glua.LState, _ *frame) (any, error) {
		return i.callMeta(L, key, args, value)
	})
	if i.broken() {
		return nil, err
	}
	return &engine.Prerendered{Value: value, Content: pre.Content, HasMeta: true, Meta: m, MetaErr: err}, nil
}

// outputFn returns the definition's output.<field> function.
func (i *instance) outputFn(key int, field string) (glua.LValue, error) {
	t, _ := i.callbacks[key].(*glua.LTable)
	if t == nil {
		return nil, errGone
	}
	out, _ := t.RawGetString("output").(*glua.LTable)
	if out == nil {
		return nil, errors.New("output is gone")
	}
	fn := out.RawGetString(field)
	if !isFunction(fn) {
		return nil, fmt.Errorf("output.%s is not a function", field)
	}
	return fn, nil
}

// method calls the definition's function field with Go values.
func (i *instance) method(L *glua.LState, key int, field string, args ...any) (glua.LValue, error) {
	fn, _, err := i.callback(key, field)
	if err != nil {
		return nil, err
	}
	vals := make([]glua.LValue, len(args))
	for k, a := range args {
		vals[k] = i.toLua(a)
	}
	return i.pcall(L, fn, vals...)
}

// content reads content blocks a script returned; content that is not
// lossless JSON becomes a block the pipeline reports as non-lossless.
func (i *instance) content(v glua.LValue) []engine.Block {
	g, err := i.conv.ToGo(v, "content", arraySchema)
	if err != nil {
		return []engine.Block{engine.RawBlock{Value: nonLossless{}}}
	}
	blocks, err := engine.ContentFromJSON(g)
	if err != nil {
		return []engine.Block{engine.RawBlock{Value: nonLossless{}}}
	}
	return blocks
}

// whenFunc is a registration's activation condition in the script.
func (pl *pool) whenFunc(key int) engine.WhenFunc {
	spec := pl.listenerSpec("a when condition")
	return func(ctx context.Context, w engine.WhenContext) (bool, error) {
		v, err := pl.invoke(key, ctx, spec, func(i *instance, L *glua.LState, f *frame) (any, error) {
			fn, _, err := i.callback(key, "")
			if err != nil {
				return nil, err
			}
			c := L.CreateTable(0, 3)
			if w.Agent != nil {
				c.RawSetString("agent", i.toLua(agentJSON(w.Agent)))
			}
			if w.ModelSelection != nil {
				if ms, err := i.conv.TryToLua(w.ModelSelection); err == nil {
					c.RawSetString("modelSelection", ms)
				}
			}
			sig := L.NewUserData()
			sig.Value = &signal{l: &liveExec{frame: f}}
			sig.Metatable = i.mts.signal
			c.RawSetString("signal", sig)
			r, err := i.pcall(L, fn, c)
			return r == glua.LTrue, err
		})
		if err != nil {
			return false, err
		}
		return v == true, nil
	}
}

// guardFunc is a guard in the script: a string return denies, nil abstains.
func (pl *pool) guardFunc(key int) engine.GuardFunc {
	spec := pl.listenerSpec("a guard")
	return func(ctx context.Context, exec *engine.Execution) (string, error) {
		v, err := pl.invoke(key, ctx, spec, func(i *instance, L *glua.LState, f *frame) (any, error) {
			fn, _, err := i.callback(key, "")
			if err != nil {
				return nil, err
			}
			r, err := i.pcall(L, fn, i.execObject(L, f, exec, nil).ud)
			if err != nil {
				return nil, err
			}
			if r == glua.LNil {
				return "", nil
			}
			s, ok := r.(glua.LString)
			if !ok {
				return nil, errors.New("a guard must return a denial reason string or nil")
			}
			if s == "" {
				return nil, errors.New("a guard returned an empty denial reason")
			}
			return string(s), nil
		})
		if err != nil {
			return "", pl.policyFailure(ctx, spec.what, exec, err)
		}
		return v.(string), nil
	}
}
